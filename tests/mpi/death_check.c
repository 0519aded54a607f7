/* death_check: a rank dies (SIGKILL) in the middle of a job; the survivors,
 * with MPI_ERRORS_RETURN, get MPIX_ERR_PROC_FAILED from a receive and a
 * send addressed to it, and the error string names the dead rank, instead
 * of hanging or reporting nobody. Run by run_mpi_test.sh with EXPECT=fatal
 * (the launcher exits non-zero and names the killed rank); the text checked
 * is this program's summary line, printed by rank 0 only when every
 * survivor saw the failure as expected. A message the victim sent before
 * it died is still received after the failure is known (as in ULFM), and
 * a barrier after it fails the same way, and (without --rma) so does a
 * large allreduce on a duplicate of MPI_COMM_WORLD whose large
 * shared-memory regions an allreduce mapped before the death (Rondo, one
 * node).
 *
 *   death_check            (at least 2 ranks; the last one dies)
 *   death_check --rma      the same, and in a lock_all epoch opened before
 *                          the death: a put and a get to the dying rank
 *                          right after it dies (success or the failure
 *                          named, no hang), then, once the failure is
 *                          known, a put and a get that fail at their flush
 *                          with MPIX_ERR_PROC_FAILED naming it (on whatever
 *                          path the window took: UCX with RONDO_SHM=0
 *                          RONDO_RMA_SHM=0, else active messages); and
 *                          on a second window, MPI_Win_start toward the
 *                          dead rank (it never posted) and MPI_Win_wait
 *                          for it (it never completed) fail, naming it
 *
 * Survivors report to rank 0 over MPI (they are alive), then leave with
 * _exit: MPI_Finalize's closing barrier would wait for the dead rank. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 1 when `rc` is MPIX_ERR_PROC_FAILED and its string names "rank <victim>"
 * (followed by a non-digit); the reason is written to why otherwise. */
static int NamesVictim(int rc, int victim, char* why, size_t why_len) {
  if (rc == MPI_SUCCESS) {
    snprintf(why, why_len, "expected MPIX_ERR_PROC_FAILED got MPI_SUCCESS");
    return 0;
  }
  int cls = 0, len = 0;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, text, &len);
  if (cls != MPIX_ERR_PROC_FAILED) {
    snprintf(why, why_len, "expected class MPIX_ERR_PROC_FAILED got %d (%s)",
             cls, text);
    return 0;
  }
  char needle[32];
  snprintf(needle, sizeof needle, "rank %d", victim);
  for (const char* p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
    const char next = p[strlen(needle)];
    if (next < '0' || next > '9') return 1;
  }
  snprintf(why, why_len, "the error does not name rank %d: %s", victim, text);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    printf("FAIL death_check: needs at least 2 ranks, got %d\n", size);
    MPI_Finalize();
    return 1;
  }
  const int victim = size - 1;
  const int rma = argc > 1 && strcmp(argv[1], "--rma") == 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Win win = MPI_WIN_NULL, pwin = MPI_WIN_NULL;
  long long* wmem = NULL;
  long long* pmem = NULL;
  if (rma) {
    MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &wmem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &pmem, &pwin);
    MPI_Win_set_errhandler(pwin, MPI_ERRORS_RETURN);
  }
  /* A duplicate whose large allreduce regions are mapped (one call past
   * the 16 KiB slots, before the death). */
  enum { kLarge = 20000 };
  static float large_in[kLarge], large_out[kLarge];
  MPI_Comm dup = MPI_COMM_NULL;
  if (!rma) {
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Allreduce(large_in, large_out, kLarge, MPI_FLOAT, MPI_SUM, dup);
  }
  /* A receive posted before the death, completed by it. */
  int v = 0;
  MPI_Request early = MPI_REQUEST_NULL;
  if (rank != victim) MPI_Irecv(&v, 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &early);
  /* A message the victim sends before it dies stays receivable after. */
  if (rank == victim)
    for (int r = 0; r < victim; ++r) {
      const int token = 1000 + r;
      MPI_Send(&token, 1, MPI_INT, r, 6, MPI_COMM_WORLD);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == victim) {
    raise(SIGKILL);
    return 1; /* not reached */
  }
  char why[MPI_MAX_ERROR_STRING + 128];
  int ok = 1;
  /* First, before this rank has seen the death: a put and a get issued
   * while the victim may still be taken for alive (on the UCX path they are
   * then in UCX when it dies, and the flush must give up on them rather
   * than hang). They may also have completed before the victim died (it
   * serves them while it finishes the barrier): success or the failure
   * named, never a hang nor another error. */
  if (rma) {
    long long out = 5, in = -1;
    int rc = MPI_Put(&out, 1, MPI_LONG_LONG, victim, 0, 1, MPI_LONG_LONG, win);
    if (rc == MPI_SUCCESS)
      rc = MPI_Get(&in, 1, MPI_LONG_LONG, victim, 1, 1, MPI_LONG_LONG, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(victim, win);
    if (rc != MPI_SUCCESS && !NamesVictim(rc, victim, why, sizeof why)) {
      printf("FAIL death_check rank %d: MPI_Put/Get + MPI_Win_flush to rank "
             "%d as it dies: %s\n", rank, victim, why);
      ok = 0;
    }
  }
  const int wait_rc = MPI_Wait(&early, MPI_STATUS_IGNORE);
  if (!NamesVictim(wait_rc, victim, why, sizeof why)) {
    printf("FAIL death_check rank %d: MPI_Wait on a receive from rank %d: %s\n",
           rank, victim, why);
    ok = 0;
  }
  /* A receive and a send posted after it. */
  const int recv_rc = MPI_Recv(&v, 1, MPI_INT, victim, 8, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE);
  if (!NamesVictim(recv_rc, victim, why, sizeof why)) {
    printf("FAIL death_check rank %d: MPI_Recv from rank %d: %s\n", rank,
           victim, why);
    ok = 0;
  }
  /* Large enough for a rendezvous: the send cannot complete locally. */
  static char big[1 << 20];
  const int send_rc = MPI_Send(big, (int)sizeof big, MPI_BYTE, victim, 9,
                               MPI_COMM_WORLD);
  if (!NamesVictim(send_rc, victim, why, sizeof why)) {
    printf("FAIL death_check rank %d: MPI_Send to rank %d: %s\n", rank,
           victim, why);
    ok = 0;
  }
  /* Then, with the failure known: both fail at their flush, named. */
  if (rma) {
    long long out = 5, in = -1;
    int rc = MPI_Put(&out, 1, MPI_LONG_LONG, victim, 0, 1, MPI_LONG_LONG, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(victim, win);
    if (!NamesVictim(rc, victim, why, sizeof why)) {
      printf("FAIL death_check rank %d: MPI_Put + MPI_Win_flush to rank %d: "
             "%s\n", rank, victim, why);
      ok = 0;
    }
    rc = MPI_Get(&in, 1, MPI_LONG_LONG, victim, 1, 1, MPI_LONG_LONG, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(victim, win);
    if (!NamesVictim(rc, victim, why, sizeof why)) {
      printf("FAIL death_check rank %d: MPI_Get + MPI_Win_flush from rank "
             "%d: %s\n", rank, victim, why);
      ok = 0;
    }
    /* PSCW with the dead rank: it will never post nor complete. */
    MPI_Group world_group, dead_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, 1, &victim, &dead_group);
    rc = MPI_Win_start(dead_group, 0, pwin);
    if (!NamesVictim(rc, victim, why, sizeof why)) {
      printf("FAIL death_check rank %d: MPI_Win_start toward rank %d: %s\n",
             rank, victim, why);
      ok = 0;
    }
    rc = MPI_Win_post(dead_group, 0, pwin);
    if (rc == MPI_SUCCESS) rc = MPI_Win_wait(pwin);
    if (!NamesVictim(rc, victim, why, sizeof why)) {
      printf("FAIL death_check rank %d: MPI_Win_post + MPI_Win_wait for rank "
             "%d: %s\n", rank, victim, why);
      ok = 0;
    }
    MPI_Group_free(&dead_group);
    MPI_Group_free(&world_group);
  }
  int token = -1;
  const int late_rc = MPI_Recv(&token, 1, MPI_INT, victim, 6, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE);
  if (late_rc != MPI_SUCCESS || token != 1000 + rank) {
    printf("FAIL death_check rank %d: the message rank %d sent before it "
           "died: expected MPI_SUCCESS and %d got %d and %d\n", rank, victim,
           1000 + rank, late_rc, token);
    ok = 0;
  }
  /* A barrier with the dead rank (Rondo: the shared-memory path's flags,
   * on one node) ends with the failure, naming it, instead of hanging. */
  const int barrier_rc = MPI_Barrier(MPI_COMM_WORLD);
  if (!NamesVictim(barrier_rc, victim, why, sizeof why)) {
    printf("FAIL death_check rank %d: MPI_Barrier with rank %d dead: %s\n",
           rank, victim, why);
    ok = 0;
  }
  /* A large allreduce with the dead rank: its round waits for the dead
   * rank's flag and ends with the failure, naming it. */
  if (!rma) {
    const int large_rc =
        MPI_Allreduce(large_in, large_out, kLarge, MPI_FLOAT, MPI_SUM, dup);
    if (!NamesVictim(large_rc, victim, why, sizeof why)) {
      printf("FAIL death_check rank %d: a large MPI_Allreduce with rank %d "
             "dead: %s\n", rank, victim, why);
      ok = 0;
    }
  }
  fflush(stdout);
  /* The survivors' verdicts, gathered by rank 0 with point-to-point
   * messages among live ranks. Each survivor waits for rank 0's answer
   * before it leaves: a rank that exits is itself a failed process to the
   * others, and its verdict must be in by then. */
  if (rank == 0) {
    int all = ok;
    for (int r = 1; r < victim; ++r) {
      int theirs = 0;
      const int rc = MPI_Recv(&theirs, 1, MPI_INT, r, 10, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS || !theirs) all = 0;
      MPI_Send(&all, 1, MPI_INT, r, 11, MPI_COMM_WORLD);
    }
    if (all)
      printf("death_check: %d surviving ranks saw rank %d fail, named\n",
             victim, victim);
    else
      printf("FAIL death_check: a survivor did not see rank %d fail as "
             "expected\n", victim);
  } else {
    int answer = 0;
    MPI_Send(&ok, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    (void)MPI_Recv(&answer, 1, MPI_INT, 0, 11, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
  }
  fflush(stdout);
  _exit(ok ? 0 : 1);
}
