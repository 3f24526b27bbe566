/* gpup2p — the verification kernels, as PTX text (see ptx_kernels.c for why PTX): they write and check
 * the pattern of libcore/base/measure.c (gp_pattern_key, gp_pattern_word) where the data is, so that
 * checking a copy never moves it to the host. PTX ISA 6.0 / sm_50: copies on any GPU a driver of CUDA 9.0
 * or later runs can be verified. tests/cli/test_ptx.sh assembles it with ptxas.
 *
 * gp_fill(buf, nw, tail, key, key2): the nw 8-byte words at buf get word i = mix(i ^ k), then `tail`
 *   bytes (< 8) the first bytes of word nw; k is key in the even stripes of 512 bytes (64 words), key2 in
 *   the odd ones (gp_copy_duplex's halves; key2 = key: one pattern). Grid-stride over the words; threads
 *   0..tail-1 one tail byte each.
 * gp_check(buf, nw, tail, key, out): the same bytes compared; every thread counts the words (and tail
 *   bytes) that differ and remembers the index of its first; then, where it found any, one atom.add of
 *   its count into out[0] and one atom.min of its index into out[1] (a tail byte counts as word nw).
 *   out (16 bytes of the checking GPU's memory) must hold 0 and ~0 before.
 * mix is splitmix64's finaliser (measure.c). buf 8-byte aligned: GPU memory, or mapped pinned host memory. */
#include "gpup2p/smcopy.h"
#include "cuda/ptx.h"

const char gp_ptx_fill_name[] = "gp_fill";
const char gp_ptx_check_name[] = "gp_check";

/* r = mix(r), t a scratch register */
#define MIX(r, t) \
	"\tadd.u64 " r ", " r ", 0x9E3779B97F4A7C15U;\n" \
	"\tshr.u64 " t ", " r ", 30;\n" \
	"\txor.b64 " r ", " r ", " t ";\n" \
	"\tmul.lo.u64 " r ", " r ", 0xBF58476D1CE4E5B9U;\n" \
	"\tshr.u64 " t ", " r ", 27;\n" \
	"\txor.b64 " r ", " r ", " t ";\n" \
	"\tmul.lo.u64 " r ", " r ", 0x94D049BB133111EBU;\n" \
	"\tshr.u64 " t ", " r ", 31;\n" \
	"\txor.b64 " r ", " r ", " t ";\n"

/* parameters and the thread's place: rd1 buf (global), rd2 nw, r1 tail, rd3 key, rd4 = rd7 = t, rd6 = T */
#define HEAD \
	"\tld.param.u64 %rd1, [p_buf];\n" \
	"\tld.param.u64 %rd2, [p_nw];\n" \
	"\tld.param.u32 %r1, [p_tail];\n" \
	"\tld.param.u64 %rd3, [p_key];\n" \
	"\tcvta.to.global.u64 %rd1, %rd1;\n" \
	GP_PTX_THREAD \
	"\tmov.u64 %rd7, %rd4;\n"

/* the tail byte of thread t (t < tail): rd12 its address, h1 its expected value */
#define TAIL_BYTE(skip) \
	"\tcvt.u64.u32 %rd10, %r1;\n" \
	"\tsetp.ge.u64 %p2, %rd7, %rd10;\n" \
	"\t@%p2 bra " skip ";\n" \
	"\txor.b64 %rd8, %rd2, %rd3;\n" \
	MIX("%rd8", "%rd9") \
	"\tcvt.u32.u64 %r6, %rd7;\n" \
	"\tshl.b32 %r6, %r6, 3;\n" \
	"\tshr.u64 %rd8, %rd8, %r6;\n" \
	"\tcvt.u16.u64 %h1, %rd8;\n" \
	"\tand.b16 %h1, %h1, 255;\n" \
	"\tshl.b64 %rd12, %rd2, 3;\n" \
	"\tadd.u64 %rd12, %rd12, %rd7;\n" \
	"\tadd.u64 %rd12, %rd1, %rd12;\n"

/* k = the key of word w's stripe: rd3 (key) when w / 64 is even, rd15 (key2) when odd */
#define STRIPE_KEY(w, k) \
	"\tshr.u64 %rd13, " w ", 6;\n" \
	"\tand.b64 %rd13, %rd13, 1;\n" \
	"\tsetp.ne.u64 %p3, %rd13, 0;\n" \
	"\tselp.b64 " k ", %rd15, %rd3, %p3;\n"

const char gp_ptx_verify_text[] =
	".version 6.0\n"
	".target sm_50\n"
	".address_size 64\n"
	"\n"
	".visible .entry gp_fill(\n"
	"\t.param .u64 p_buf,\n"
	"\t.param .u64 p_nw,\n"
	"\t.param .u32 p_tail,\n"
	"\t.param .u64 p_key,\n"
	"\t.param .u64 p_key2\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<4>;\n"
	"\t.reg .b16 %h<4>;\n"
	"\t.reg .b32 %r<8>;\n"
	"\t.reg .b64 %rd<16>;\n"
	"\n"
	HEAD
	"\tld.param.u64 %rd15, [p_key2];\n"
	"FLOOP:\n"
	"\tsetp.ge.u64 %p1, %rd4, %rd2;\n"
	"\t@%p1 bra FTAIL;\n"
	STRIPE_KEY("%rd4", "%rd14")
	"\txor.b64 %rd8, %rd4, %rd14;\n"
	MIX("%rd8", "%rd9")
	"\tshl.b64 %rd11, %rd4, 3;\n"
	"\tadd.u64 %rd11, %rd1, %rd11;\n"
	"\tst.global.u64 [%rd11], %rd8;\n"
	"\tadd.u64 %rd4, %rd4, %rd6;\n"
	"\tbra.uni FLOOP;\n"
	"FTAIL:\n"
	STRIPE_KEY("%rd2", "%rd3")
	TAIL_BYTE("FDONE")
	"\tst.global.u8 [%rd12], %h1;\n"
	"FDONE:\n"
	"\tret;\n"
	"}\n"
	"\n"
	".visible .entry gp_check(\n"
	"\t.param .u64 p_buf,\n"
	"\t.param .u64 p_nw,\n"
	"\t.param .u32 p_tail,\n"
	"\t.param .u64 p_key,\n"
	"\t.param .u64 p_out\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<4>;\n"
	"\t.reg .b16 %h<4>;\n"
	"\t.reg .b32 %r<8>;\n"
	"\t.reg .b64 %rd<20>;\n"
	"\n"
	HEAD
	"\tmov.u64 %rd13, 0;\n"                       /* rd13 = mismatches */
	"\tmov.u64 %rd14, -1;\n"                      /* rd14 = the first one's index */
	"CLOOP:\n"
	"\tsetp.ge.u64 %p1, %rd4, %rd2;\n"
	"\t@%p1 bra CTAIL;\n"
	"\tshl.b64 %rd11, %rd4, 3;\n"
	"\tadd.u64 %rd11, %rd1, %rd11;\n"
	"\tld.global.u64 %rd15, [%rd11];\n"
	"\txor.b64 %rd8, %rd4, %rd3;\n"
	MIX("%rd8", "%rd9")
	"\tsetp.ne.u64 %p3, %rd15, %rd8;\n"
	"\t@%p3 add.u64 %rd13, %rd13, 1;\n"
	"\t@%p3 min.u64 %rd14, %rd14, %rd4;\n"
	"\tadd.u64 %rd4, %rd4, %rd6;\n"
	"\tbra.uni CLOOP;\n"
	"CTAIL:\n"
	TAIL_BYTE("CSUM")
	"\tld.global.u8 %h2, [%rd12];\n"
	"\tsetp.ne.u16 %p3, %h2, %h1;\n"
	"\t@%p3 add.u64 %rd13, %rd13, 1;\n"
	"\t@%p3 min.u64 %rd14, %rd14, %rd2;\n"
	"CSUM:\n"
	"\tsetp.eq.u64 %p1, %rd13, 0;\n"
	"\t@%p1 bra CDONE;\n"
	"\tld.param.u64 %rd16, [p_out];\n"
	"\tcvta.to.global.u64 %rd16, %rd16;\n"
	"\tatom.global.add.u64 %rd17, [%rd16], %rd13;\n"
	"\tatom.global.min.u64 %rd18, [%rd16+8], %rd14;\n"
	"CDONE:\n"
	"\tret;\n"
	"}\n";
