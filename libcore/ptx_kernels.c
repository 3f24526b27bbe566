/* gpup2p — the kernels that the GPU's own cores run, as PTX text: the driver compiles it for whatever GPU
 * it finds (cuModuleLoadData), so the build needs no CUDA compiler. PTX ISA 7.0 / sm_70: every GPU that
 * a driver of CUDA 11.0 or later runs, Volta onwards. tests/cli/test_ptx.sh assembles it with ptxas.
 *
 * gp_copy16(dst, src, n16, tail): copy n16 16-byte words and then `tail` bytes (< 16) from src to dst.
 *   Grid-stride: thread t of T copies words t, t+T, t+2T, ...; eight of them at a time (eight 16-byte
 *   loads in flight before the eight stores), then one at a time, then threads 0..tail-1 one byte each.
 *   src and dst must be 16-byte aligned (the caller checks).
 * gp_chase(start, hops, out): one thread follows a chain of 64-bit pointers `hops` times (each load's
 *   address is the value the previous one returned), reading %globaltimer (ns) before and after;
 *   out[0] = the last pointer, out[1] = the nanoseconds. */
#include "gpup2p/smcopy.h"

const char gp_ptx_copy_name[] = "gp_copy16";
const char gp_ptx_chase_name[] = "gp_chase";

/* the copy's loads and stores (cache operators: tests/perf/sm_compare.sh compared them) */
#ifndef GP_PTX_LD
#define GP_PTX_LD "ld.global"
#endif
#ifndef GP_PTX_ST
#define GP_PTX_ST "st.global"
#endif

const char gp_ptx_text[] =
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	"\n"
	".visible .entry gp_copy16(\n"
	"\t.param .u64 p_dst,\n"
	"\t.param .u64 p_src,\n"
	"\t.param .u64 p_n16,\n"
	"\t.param .u32 p_tail\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<4>;\n"
	"\t.reg .b16 %h<2>;\n"
	"\t.reg .b32 %r<8>;\n"
	"\t.reg .b32 %v<32>;\n"
	"\t.reg .b64 %rd<24>;\n"
	"\n"
	"\tld.param.u64 %rd1, [p_dst];\n"
	"\tld.param.u64 %rd2, [p_src];\n"
	"\tld.param.u64 %rd3, [p_n16];\n"
	"\tld.param.u32 %r1, [p_tail];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tcvta.to.global.u64 %rd2, %rd2;\n"
	"\tmov.u32 %r2, %ctaid.x;\n"
	"\tmov.u32 %r3, %ntid.x;\n"
	"\tmov.u32 %r4, %tid.x;\n"
	"\tmov.u32 %r5, %nctaid.x;\n"
	"\tmul.wide.u32 %rd4, %r2, %r3;\n"
	"\tcvt.u64.u32 %rd5, %r4;\n"
	"\tadd.u64 %rd4, %rd4, %rd5;\n"          /* rd4 = t, this thread's index */
	"\tmul.wide.u32 %rd6, %r5, %r3;\n"       /* rd6 = T, threads in the grid */
	"\tshl.b64 %rd7, %rd6, 4;\n"             /* rd7 = step: 16 T bytes */
	"\tshl.b64 %rd8, %rd4, 4;\n"             /* rd8 = off: 16 t */
	"\tshl.b64 %rd9, %rd3, 4;\n"             /* rd9 = end: 16 n16 */
	"\tmul.lo.u64 %rd10, %rd7, 7;\n"         /* rd10 = 7 steps */
	"\tshl.b64 %rd11, %rd7, 3;\n"            /* rd11 = 8 steps */
	"LOOP8:\n"
	"\tadd.u64 %rd12, %rd8, %rd10;\n"
	"\tsetp.ge.u64 %p1, %rd12, %rd9;\n"
	"\t@%p1 bra LOOP1;\n"
	"\tadd.u64 %rd13, %rd2, %rd8;\n"
	"\tadd.u64 %rd14, %rd1, %rd8;\n"
	"\tadd.u64 %rd15, %rd13, %rd7;\n"
	"\tadd.u64 %rd16, %rd15, %rd7;\n"
	"\tadd.u64 %rd17, %rd16, %rd7;\n"
	"\t" GP_PTX_LD ".v4.u32 {%v0, %v1, %v2, %v3}, [%rd13];\n"
	"\t" GP_PTX_LD ".v4.u32 {%v4, %v5, %v6, %v7}, [%rd15];\n"
	"\t" GP_PTX_LD ".v4.u32 {%v8, %v9, %v10, %v11}, [%rd16];\n"
	"\t" GP_PTX_LD ".v4.u32 {%v12, %v13, %v14, %v15}, [%rd17];\n"
	"\tadd.u64 %rd13, %rd17, %rd7;\n"
	"\tadd.u64 %rd15, %rd13, %rd7;\n"
	"\tadd.u64 %rd16, %rd15, %rd7;\n"
	"\tadd.u64 %rd17, %rd16, %rd7;\n"
	"\t" GP_PTX_LD ".v4.u32 {%v16, %v17, %v18, %v19}, [%rd13];\n"
	"\t" GP_PTX_LD ".v4.u32 {%v20, %v21, %v22, %v23}, [%rd15];\n"
	"\t" GP_PTX_LD ".v4.u32 {%v24, %v25, %v26, %v27}, [%rd16];\n"
	"\t" GP_PTX_LD ".v4.u32 {%v28, %v29, %v30, %v31}, [%rd17];\n"
	"\tadd.u64 %rd18, %rd14, %rd7;\n"
	"\tadd.u64 %rd19, %rd18, %rd7;\n"
	"\tadd.u64 %rd20, %rd19, %rd7;\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd14], {%v0, %v1, %v2, %v3};\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd18], {%v4, %v5, %v6, %v7};\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd19], {%v8, %v9, %v10, %v11};\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd20], {%v12, %v13, %v14, %v15};\n"
	"\tadd.u64 %rd14, %rd20, %rd7;\n"
	"\tadd.u64 %rd18, %rd14, %rd7;\n"
	"\tadd.u64 %rd19, %rd18, %rd7;\n"
	"\tadd.u64 %rd20, %rd19, %rd7;\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd14], {%v16, %v17, %v18, %v19};\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd18], {%v20, %v21, %v22, %v23};\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd19], {%v24, %v25, %v26, %v27};\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd20], {%v28, %v29, %v30, %v31};\n"
	"\tadd.u64 %rd8, %rd8, %rd11;\n"
	"\tbra.uni LOOP8;\n"
	"LOOP1:\n"
	"\tsetp.ge.u64 %p2, %rd8, %rd9;\n"
	"\t@%p2 bra BYTES;\n"
	"\tadd.u64 %rd13, %rd2, %rd8;\n"
	"\tadd.u64 %rd14, %rd1, %rd8;\n"
	"\t" GP_PTX_LD ".v4.u32 {%v0, %v1, %v2, %v3}, [%rd13];\n"
	"\t" GP_PTX_ST ".v4.u32 [%rd14], {%v0, %v1, %v2, %v3};\n"
	"\tadd.u64 %rd8, %rd8, %rd7;\n"
	"\tbra.uni LOOP1;\n"
	"BYTES:\n"
	"\tcvt.u64.u32 %rd21, %r1;\n"
	"\tsetp.ge.u64 %p3, %rd4, %rd21;\n"
	"\t@%p3 bra DONE;\n"
	"\tadd.u64 %rd22, %rd9, %rd4;\n"
	"\tadd.u64 %rd13, %rd2, %rd22;\n"
	"\tadd.u64 %rd14, %rd1, %rd22;\n"
	"\tld.global.u8 %h1, [%rd13];\n"
	"\tst.global.u8 [%rd14], %h1;\n"
	"DONE:\n"
	"\tret;\n"
	"}\n"
	"\n"
	".visible .entry gp_chase(\n"
	"\t.param .u64 p_start,\n"
	"\t.param .u64 p_hops,\n"
	"\t.param .u64 p_out\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\n"
	"\tld.param.u64 %rd1, [p_start];\n"
	"\tld.param.u64 %rd2, [p_hops];\n"
	"\tld.param.u64 %rd3, [p_out];\n"
	"\tcvta.to.global.u64 %rd3, %rd3;\n"
	"\tmov.u64 %rd4, %globaltimer;\n"
	"\tsetp.eq.u64 %p1, %rd2, 0;\n"
	"\t@%p1 bra CHASED;\n"
	"CHASE:\n"
	"\tld.global.u64 %rd1, [%rd1];\n"
	"\tsub.u64 %rd2, %rd2, 1;\n"
	"\tsetp.ne.u64 %p1, %rd2, 0;\n"
	"\t@%p1 bra CHASE;\n"
	"CHASED:\n"
	"\tmov.u64 %rd5, %globaltimer;\n"
	"\tsub.u64 %rd6, %rd5, %rd4;\n"
	"\tst.global.u64 [%rd3], %rd1;\n"
	"\tst.global.u64 [%rd3+8], %rd6;\n"
	"\tret;\n"
	"}\n";
