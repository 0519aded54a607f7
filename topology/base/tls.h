// Thread-local variables on the fast path.
//
// In a shared library (librondo.so) a thread_local is reached through
// __tls_get_addr (the general-dynamic model): a call per access, 5-7% of an
// empty MPI_Test/MPI_Wait polling pass in perf (docs/performance.md).
// RONDO_HOT_TLS asks for the initial-exec model instead: one load through
// the thread pointer. The variables must be few and small: a library
// loaded by dlopen takes them from glibc's surplus of static TLS (a few
// hundred bytes), which is why it is not the default for every
// thread_local of the library.
#ifndef RONDO_TOPOLOGY_BASE_TLS_H_
#define RONDO_TOPOLOGY_BASE_TLS_H_

#if defined(__GNUC__)
#define RONDO_HOT_TLS __attribute__((tls_model("initial-exec")))
#else
#define RONDO_HOT_TLS
#endif

#endif  // RONDO_TOPOLOGY_BASE_TLS_H_
