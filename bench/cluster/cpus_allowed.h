/* cpus_allowed.h: this process's Cpus_allowed_list from /proc/self/status,
 * for the cluster's MPI test programs (mpi_hosts.c, compiled by each MPI's
 * own mpicc from this directory, and slurm_check.c). C, header only. */
#ifndef RONDO_BENCH_CLUSTER_CPUS_ALLOWED_H_
#define RONDO_BENCH_CLUSTER_CPUS_ALLOWED_H_

#include <stdio.h>
#include <string.h>

/* Writes the list (e.g. "0-1") to out, or "?" when it cannot be read. */
static void CpusAllowed(char* out, size_t size) {
  char line[4096];
  FILE* f = fopen("/proc/self/status", "r");
  snprintf(out, size, "?");
  if (f == NULL) return;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
      char* v = line + 18;
      v += strspn(v, " \t");
      v[strcspn(v, "\n")] = '\0';
      snprintf(out, size, "%s", v);
      break;
    }
  }
  fclose(f);
}

#endif  /* RONDO_BENCH_CLUSTER_CPUS_ALLOWED_H_ */
