/* bench/overlap/overlap_kernel: the kernel's floor of a 2-rank nonblocking
 * collective, measured beside the computation like any library (issue 27;
 * bench/overlap's library `kernel`, overlap.c's --kernel-floor).
 *
 * Each rank keeps two TCP connections to its peer, one per direction, each
 * with a helper thread blocked in the kernel on whole messages
 * (bench/common/tcp_floor.h): send() until every byte is queued,
 * recv(MSG_WAITALL) until every byte has arrived. So the kernel alone moves
 * the bytes while the computation runs: no progress engine, no handshake, no
 * copy out of a library's buffers. What the computation loses beside it is
 * the kernel's own work on those bytes on its core, which no MPI library
 * over this transport can avoid.
 *
 * Set-up: rank 1 calls ov_kernel_listen and passes the address it writes to
 * rank 0, which calls ov_kernel_connect; rank 1 then calls
 * ov_kernel_accept. Every call returns 0 (or a handle) on success, and on
 * failure -1 (or NULL) with a message naming what failed in err. One thread
 * calls a handle's functions. C11, for the MPI program. */
#ifndef RONDO_BENCH_OVERLAP_OVERLAP_KERNEL_H_
#define RONDO_BENCH_OVERLAP_OVERLAP_KERNEL_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct OvKernel OvKernel;

/* Rank 1's side: two listening sockets; their addresses, for rank 0, in
 * `address` (at most `cap` bytes with the terminating zero). */
OvKernel* ov_kernel_listen(char* address, size_t cap, char* err,
                           size_t errcap);
/* Rank 1's side, after rank 0 connected: takes both connections. */
int ov_kernel_accept(OvKernel* k, char* err, size_t errcap);
/* Rank 0's side: connects to rank 1's two addresses. */
OvKernel* ov_kernel_connect(const char* address, char* err, size_t errcap);

/* Hands the helpers `n` bytes to send from `out` and `n` bytes to receive
 * into `in` (either NULL: none that way) and returns at once. */
int ov_kernel_start(OvKernel* k, const void* out, void* in, size_t n,
                    char* err, size_t errcap);
/* Returns when what ov_kernel_start handed over is sent (queued in the
 * kernel) and received. */
int ov_kernel_wait(OvKernel* k, char* err, size_t errcap);

void ov_kernel_free(OvKernel* k);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_BENCH_OVERLAP_OVERLAP_KERNEL_H_ */
