/* Host duplex SM copies: why nvbandwidth's *_bidirectional_memcpy_sm figures on several GPUs are above
 * gpup2p's (tests/perf/results/duplex-probe-*.txt). Built and run by hand on a GPU machine:
 *   nvcc -O2 -arch=sm_90 -cudart static -o /tmp/duplex_probe tests/perf/duplex_probe.cu
 *   /tmp/duplex_probe [MiB=512] [loops=16]
 * Each GPU copies both ways between its own buffer and a pinned host buffer of its own (even warps one
 * way, odd warps the other, as gp_copy_duplex and nvbandwidth's split-warp test do), first on GPU 0
 * alone, then on every GPU at once; printed: the mean over the GPUs of half the bytes moved both ways
 * per second of each GPU's own events (per direction, as both tools count it), and the lowest GPU's.
 * Kernels:
 *   word-repeat:    one thread per 16-byte word; each thread copies its word `loops` times in a row
 *                   in one launch (nvbandwidth v0.8's split-warp kernel does this);
 *   word-launches:  the same kernel, one copy per launch, `loops` launches (every pass streams the
 *                   whole buffer);
 *   stride-B:       B blocks of 512 threads per SM striding the buffer, `loops` launches (gpup2p's
 *                   geometry before 2026-11-27). */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                                           \
	do {                                                                                            \
		cudaError_t r_ = (x);                                                                   \
		if (r_) {                                                                               \
			printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(r_));               \
			exit(1);                                                                        \
		}                                                                                       \
	} while (0)

__global__ void word_repeat(unsigned long long loops, uint4 *a, uint4 *b)
{
	unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
	uint4 *s = (idx / 32) & 1 ? b + idx : a + idx, *d = (idx / 32) & 1 ? a + idx : b + idx;

	for (unsigned long long i = 0; i < loops; i++)
		__stcg(d, __ldcg(s));
}

__global__ void stride(size_t n16, uint4 *a, uint4 *b)
{
	size_t T = (size_t)gridDim.x * blockDim.x, t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	int odd = (t >> 5) & 1;
	uint4 *s = odd ? b : a, *d = odd ? a : b;

	for (size_t i = t; i < n16; i += T)
		__stcg(d + i, __ldcg(s + i));
}

int main(int argc, char **argv)
{
	size_t size = (size_t)(argc > 1 ? atoll(argv[1]) : 512) << 20, n16 = size / 16;
	int loops = argc > 2 ? atoi(argv[2]) : 16, n, sms = 0;
	const char *names[] = { "word-repeat", "word-launches", "stride-2", "stride-8", "stride-32" };

	CK(cudaGetDeviceCount(&n));
	std::vector<uint4 *> h(n), d(n), hd(n);
	std::vector<cudaStream_t> st(n);
	std::vector<cudaEvent_t> e0(n), e1(n);
	for (int g = 0; g < n; g++) {
		CK(cudaSetDevice(g));
		CK(cudaMalloc(&d[g], size));
		CK(cudaHostAlloc(&h[g], size, cudaHostAllocPortable | cudaHostAllocMapped));
		CK(cudaHostGetDevicePointer((void **)&hd[g], h[g], 0));
		CK(cudaMemset(d[g], 1, size));
		memset(h[g], 2, size);
		CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
		CK(cudaEventCreate(&e0[g]));
		CK(cudaEventCreate(&e1[g]));
		CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g));
	}
	for (int G : { 1, n })
		for (int k = 0; k < 5; k++)
			for (int rep = 0; rep < 2; rep++) {
				double sum = 0, low = 1e18;

				for (int g = 0; g < G; g++) {
					auto launch = [&](int times) {
						if (k == 0)
							word_repeat<<<n16 / 1024, 1024, 0, st[g]>>>(times, hd[g], d[g]);
						for (int i = 0; k == 1 && i < times; i++)
							word_repeat<<<n16 / 1024, 1024, 0, st[g]>>>(1, hd[g], d[g]);
						for (int i = 0; k > 1 && i < times; i++)
							stride<<<sms * (k == 2 ? 2 : k == 3 ? 8 : 32), 512, 0, st[g]>>>(
								n16, d[g], hd[g]);
					};
					CK(cudaSetDevice(g));
					launch(1);
					CK(cudaEventRecord(e0[g], st[g]));
					launch(loops);
					CK(cudaEventRecord(e1[g], st[g]));
				}
				for (int g = 0; g < G; g++) {
					float ms;
					double bw;

					CK(cudaSetDevice(g));
					CK(cudaStreamSynchronize(st[g]));
					CK(cudaEventElapsedTime(&ms, e0[g], e1[g]));
					bw = (double)size * loops / 2 / (ms * 1e-3) / 1e9;
					sum += bw;
					low = bw < low ? bw : low;
				}
				printf("GPUs %d  %-14s round %d: %.1f GB/s a direction per GPU (lowest %.1f)\n", G,
				       names[k], rep, sum / G, low);
			}
	return 0;
}
