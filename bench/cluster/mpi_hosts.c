/* mpi_hosts: where do an MPI job's ranks run, and does data cross the
 * emulated links? For cluster_test.sh and for checking a launcher by hand
 * (docs/cluster.md, "Running Open MPI, MPICH and Rondo across the hosts").
 *
 * Every rank prints one line:
 *   rank R of S host NAME net net:[INODE] cpus LIST [NAME=VALUE]...
 * with its host name (MPI_Get_processor_name), its network namespace
 * (readlink /proc/self/ns/net), the cores it may run on (Cpus_allowed_list
 * of /proc/self/status) and the value of each
 * variable named by --env ("(unset)" when it is not set). Ranks 0 and 1
 * then exchange --bytes bytes each way, check every byte, and print
 *   rank R exchanged B bytes with rank P: ok
 * A wrong byte aborts the job (MPI_Abort, exit status 3) after naming the
 * first bad offset. Each rank also sends a message to itself first.
 *
 * Built with any MPI's mpicc: plain C and MPI-1 calls only.
 *
 *   mpi_hosts [--bytes N] [--env NAME]...
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus_allowed.h"

enum { kMaxEnv = 16 };

static void Usage(const char* why) {
  fprintf(stderr,
          "mpi_hosts: %s\n"
          "Usage: mpi_hosts [--bytes N] [--env NAME]...\n"
          "  --bytes N   bytes ranks 0 and 1 send each way (1..1073741824; "
          "default 4194304)\n"
          "  --env NAME  print the value of environment variable NAME (up "
          "to %d times)\n",
          why, kMaxEnv);
}

/* The byte at offset i of what rank r sends. */
static unsigned char Pattern(long i, int r) {
  return (unsigned char)((i * 131 + (i >> 12) * 7 + r * 29 + 1) & 0xff);
}

int main(int argc, char** argv) {
  long bytes = 4L << 20;
  const char* env[kMaxEnv];
  int nenv = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
      char* end;
      errno = 0;
      bytes = strtol(argv[++i], &end, 10);
      if (errno != 0 || *end != '\0' || end == argv[i] || bytes < 1 ||
          bytes > (1L << 30)) {
        char why[256];
        snprintf(why, sizeof why,
                 "invalid --bytes '%s'; allowed: an integer 1..1073741824",
                 argv[i]);
        Usage(why);
        return 2;
      }
    } else if (strcmp(argv[i], "--env") == 0 && i + 1 < argc) {
      if (nenv == kMaxEnv) {
        Usage("too many --env options");
        return 2;
      }
      env[nenv++] = argv[++i];
    } else {
      char why[256];
      snprintf(why, sizeof why, "unknown or incomplete argument '%s'",
               argv[i]);
      Usage(why);
      return 2;
    }
  }

  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  char net[256] = "?";
  ssize_t n = readlink("/proc/self/ns/net", net, sizeof net - 1);
  if (n > 0) net[n] = '\0';
  char cpus[1024];
  CpusAllowed(cpus, sizeof cpus);

  /* A message to itself (the "self" path of the MPI's transports). */
  int self_out = 1000 + rank, self_in = -1;
  MPI_Sendrecv(&self_out, 1, MPI_INT, rank, 7, &self_in, 1, MPI_INT, rank, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (self_in != self_out) {
    fprintf(stderr, "mpi_hosts: rank %d: a message to itself gave %d, not %d\n",
            rank, self_in, self_out);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  char host[MPI_MAX_PROCESSOR_NAME + 1] = "?";
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);
  char line[8192];
  int len = snprintf(line, sizeof line, "rank %d of %d host %s net %s cpus %s",
                     rank, size, host, net, cpus);
  for (int e = 0; e < nenv && len < (int)sizeof line; ++e) {
    const char* v = getenv(env[e]);
    len += snprintf(line + len, sizeof line - len, " %s=%s", env[e],
                    v != NULL ? v : "(unset)");
  }
  printf("%s\n", line);
  fflush(stdout);

  if (size >= 2 && rank < 2) {
    int peer = 1 - rank;
    unsigned char* out = malloc((size_t)bytes);
    unsigned char* in = malloc((size_t)bytes);
    if (out == NULL || in == NULL) {
      fprintf(stderr, "mpi_hosts: rank %d: cannot allocate 2 x %ld bytes\n",
              rank, bytes);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (long i = 0; i < bytes; ++i) out[i] = Pattern(i, rank);
    memset(in, 0, (size_t)bytes);
    /* --bytes is at most 1 GiB, so the count fits an int. */
    MPI_Sendrecv(out, (int)bytes, MPI_BYTE, peer, 1, in, (int)bytes,
                 MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long i = 0; i < bytes; ++i) {
      if (in[i] != Pattern(i, peer)) {
        fprintf(stderr,
                "mpi_hosts: rank %d: byte %ld from rank %d is %u, expected "
                "%u\n",
                rank, i, peer, in[i], Pattern(i, peer));
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    printf("rank %d exchanged %ld bytes with rank %d: ok\n", rank, bytes,
           peer);
    fflush(stdout);
    free(out);
    free(in);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
