/* bench/overlap/overlap_floor.c: the kernel's floor for bench/overlap's
 * progress CPU (issue 27): the CPU time of a plain TCP transfer of the same
 * bytes between the same hosts, both ends, with blocking sockets (a thread that
 * waits for the network sleeps in the kernel and costs nothing).
 *
 *   overlap_floor recv [--bind ADDR] [--port P] --bytes B [--reps N]
 *   overlap_floor send --to ADDR --port P --bytes B [--reps N]
 *
 * recv listens (port 0: any free port), prints "port P" on a line of its
 * own as soon as it listens, accepts one connection, then N times reads B
 * bytes and answers one byte; send connects and N times writes B bytes and
 * waits for the answer (one message at a time, as an MPI rendezvous moves
 * it). Each side then prints one JSON line:
 *   {"type": "floor", "side": "send"|"recv", "bytes": N*B, "reps": N,
 *    "cpu_us": X, "user_us": X, "sys_us": X, "seconds": X}
 * with its CPU time (getrusage(RUSAGE_SELF): user + system) and wall time
 * from the connection to the last byte. bench/overlap/overlap_driver.cc runs
 * the two in two hosts of the emulated cluster (or on the loopback in shared
 * memory) before every job and reports (cpu_send + cpu_recv) per MiB
 * handled at each end: kernel_floor_ns_per_mib. What the kernel does in
 * softirq context on another thread's time (tbf's dequeue, an interrupted
 * process's receive path) may be charged to neither side: the floor is a
 * lower bound. Bad arguments: a message naming the value, exit status 2. */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void Fail(int code, const char* what, const char* detail) {
  fprintf(stderr, "overlap_floor: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  exit(code);
}

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* User and system CPU time of the process, seconds. */
static void Cpu(double* user, double* sys) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *user = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec;
  *sys = (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static long long Integer(const char* v, const char* opt, long long lo,
                         long long hi) {
  char* end = NULL;
  errno = 0;
  const long long x = v ? strtoll(v, &end, 10) : 0;
  if (v == NULL || *v == 0 || *end != 0 || errno || x < lo || x > hi) {
    fprintf(stderr,
            "overlap_floor: %s: '%s' is not allowed; expected an integer in "
            "%lld..%lld\n",
            opt, v ? v : "(missing)", lo, hi);
    exit(2);
  }
  return x;
}

static void Transfer(int fd, char* buf, size_t n, int sending) {
  size_t done = 0;
  while (done < n) {
    const ssize_t k = sending ? write(fd, buf + done, n - done)
                              : read(fd, buf + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) Fail(1, sending ? "write" : "read",
                     k == 0 ? "the peer closed the connection" : strerror(errno));
    done += (size_t)k;
  }
}

int main(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "send") != 0 && strcmp(argv[1], "recv") != 0)) {
    fprintf(stderr,
            "overlap_floor: '%s' is not allowed; expected send or recv "
            "(see bench/overlap/overlap_floor.c)\n",
            argc < 2 ? "(missing)" : argv[1]);
    return 2;
  }
  const int sending = strcmp(argv[1], "send") == 0;
  const char *bind_addr = "0.0.0.0", *to = NULL;
  long long port = 0, bytes = 0, reps = 10;
  for (int a = 2; a < argc; a += 2) {
    const char* k = argv[a];
    const char* v = a + 1 < argc ? argv[a + 1] : NULL;
    if (strcmp(k, "--bind") == 0 && v) bind_addr = v;
    else if (strcmp(k, "--to") == 0 && v) to = v;
    else if (strcmp(k, "--port") == 0) port = Integer(v, k, 0, 65535);
    else if (strcmp(k, "--bytes") == 0) bytes = Integer(v, k, 1, 1LL << 32);
    else if (strcmp(k, "--reps") == 0) reps = Integer(v, k, 1, 100000);
    else {
      fprintf(stderr, "overlap_floor: option '%s' is not allowed; expected "
              "--bind, --to, --port, --bytes, --reps\n", k);
      return 2;
    }
  }
  if (bytes == 0) {
    fprintf(stderr, "overlap_floor: --bytes is required (allowed: 1..2^32)\n");
    return 2;
  }
  if (sending && (to == NULL || port == 0)) {
    fprintf(stderr, "overlap_floor: send: --to ADDR and --port 1..65535 are "
            "required (allowed: an IPv4 address and the port recv printed)\n");
    return 2;
  }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, sending ? to : bind_addr, &addr.sin_addr) != 1) {
    fprintf(stderr, "overlap_floor: '%s' is not allowed; expected an IPv4 "
            "address\n", sending ? to : bind_addr);
    return 2;
  }
  char* buf = malloc((size_t)bytes);
  if (buf == NULL) Fail(1, "out of memory", NULL);
  memset(buf, 7, (size_t)bytes);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Fail(1, "socket", strerror(errno));
  if (sending) {
    if (connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0)
      Fail(1, "connect", strerror(errno));
  } else {
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0)
      Fail(1, "bind", strerror(errno));
    if (listen(fd, 1) != 0) Fail(1, "listen", strerror(errno));
    socklen_t len = sizeof addr;
    getsockname(fd, (struct sockaddr*)&addr, &len);
    printf("port %d\n", ntohs(addr.sin_port));
    fflush(stdout);
    const int c = accept(fd, NULL, NULL);
    if (c < 0) Fail(1, "accept", strerror(errno));
    close(fd);
    fd = c;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  double u0, s0, u1, s1;
  Cpu(&u0, &s0);
  const double t0 = Now();
  char ack = 1;
  for (long long i = 0; i < reps; ++i) {
    Transfer(fd, buf, (size_t)bytes, sending);
    Transfer(fd, &ack, 1, !sending);
  }
  const double seconds = Now() - t0;
  Cpu(&u1, &s1);
  close(fd);
  free(buf);
  printf("{\"type\": \"floor\", \"side\": \"%s\", \"bytes\": %lld, "
         "\"reps\": %lld, \"cpu_us\": %.1f, \"user_us\": %.1f, "
         "\"sys_us\": %.1f, \"seconds\": %.6f}\n",
         sending ? "send" : "recv", bytes * reps, reps,
         ((u1 - u0) + (s1 - s0)) * 1e6, (u1 - u0) * 1e6, (s1 - s0) * 1e6,
         seconds);
  return 0;
}
