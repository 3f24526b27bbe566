/* gpup2p — what the PTX texts (ptx_kernels.c, ptx_verify.c) share. Internal to libcore/cuda. */
#ifndef GPUP2P_CUDA_PTX_H
#define GPUP2P_CUDA_PTX_H

/* The thread's place in a one-dimensional grid: rd4 = t (its index), rd6 = T (threads in the grid);
 * r2-r5 and rd5 are scratch. */
#define GP_PTX_THREAD \
	"\tmov.u32 %r2, %ctaid.x;\n" \
	"\tmov.u32 %r3, %ntid.x;\n" \
	"\tmov.u32 %r4, %tid.x;\n" \
	"\tmov.u32 %r5, %nctaid.x;\n" \
	"\tmul.wide.u32 %rd4, %r2, %r3;\n" \
	"\tcvt.u64.u32 %rd5, %r4;\n" \
	"\tadd.u64 %rd4, %rd4, %rd5;\n" \
	"\tmul.wide.u32 %rd6, %r5, %r3;\n"

#endif
