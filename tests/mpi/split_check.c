/* split_check: the split-tree collectives (Rondo extension, MPIX_) give the
 * same results as the unsplit ones for every split level S, every
 * communicator size from 1 to the world size, and every root.
 *
 * For each size k, the first k ranks form a communicator; for S = off and
 * S = 0 .. H(k) (MPIX_Comm_set_split), every root runs MPI_Ibcast,
 * MPI_Ireduce (a sum, and a non-commutative user op: composition of affine
 * maps, which checks the rank order), MPI_Igather and MPI_Iscatter, all five
 * outstanding at once, and each S runs MPI_Iallreduce; every result is compared with a reference computed
 * locally. Between the call and MPI_Wait the ranks compute without MPI
 * calls, so levels placed in MPI_Wait really run there.
 *
 *   split_check [--max-size K] [--big]
 *     --max-size K  sizes 1..K only (default: the world size)
 *     --big         also a 256 KiB bcast and reduce per (size, S): the
 *                   rendezvous path.
 * Rondo-only (MPIX_Comm_set_split). */
#include <stdint.h>

#include "check.h"

#define COUNT 5

static volatile double sink;
static void compute(int n) {
  double x = 1.0;
  for (int i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static int value(int rank, int root, int i) {
  return rank * 1000 + root * 10 + i + 1;
}

/* Affine maps x -> a x + b over uint32; op(in, inout): inout = in o inout,
 * so the reduction is x_0 o x_1 o ... o x_{k-1}. */
static void compose(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const uint32_t* p = (const uint32_t*)in;
  uint32_t* q = (uint32_t*)inout;
  for (int e = 0; e < *len; ++e) {
    uint32_t a = p[2 * e] * q[2 * e];
    uint32_t b = p[2 * e] * q[2 * e + 1] + p[2 * e + 1];
    q[2 * e] = a;
    q[2 * e + 1] = b;
  }
}

static void affine_of(int rank, int i, uint32_t* ab) {
  ab[0] = (uint32_t)(2 * rank + 3 + i);
  ab[1] = (uint32_t)(7 * rank + 1 + 5 * i);
}

static int height(int k) {
  int h = 0;
  while ((1 << h) < k) ++h;
  return h;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  chk_init();
  int rank, world;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int max_size = world, big = 0;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--max-size") == 0 && a + 1 < argc)
      max_size = atoi(argv[++a]);
    else if (strcmp(argv[a], "--big") == 0)
      big = 1;
  }
  if (max_size > world) max_size = world;

  MPI_Datatype affine;
  MPI_Type_contiguous(2, MPI_UNSIGNED, &affine);
  MPI_Type_commit(&affine);
  MPI_Op op_compose;
  MPI_Op_create(compose, 0, &op_compose);

  int buf[COUNT], in[COUNT], red[COUNT], all[COUNT], gin[COUNT], sout[COUNT];
  uint32_t mine[2 * COUNT], out[2 * COUNT];
  int* gathered = malloc(sizeof(int) * COUNT * world);
  int* scatter_src = malloc(sizeof(int) * COUNT * world);
  const int big_count = 64 * 1024;
  int* bigbuf = malloc(sizeof(int) * big_count);
  int* bigred = malloc(sizeof(int) * big_count);

  for (int k = 1; k <= max_size; ++k) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &sub);
    if (sub == MPI_COMM_NULL) continue;
    const int h = height(k);
    /* Bad levels are refused with a message, the setting kept. */
    MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    int bad = MPIX_Comm_set_split(sub, 32);
    int cls = -1;
    MPI_Error_class(bad, &cls);
    chk_context("size %d", k);
    check_ll("MPIX_Comm_set_split(32) error class", MPI_ERR_ARG, cls);

    for (int s = -1; s <= h; ++s) {
      const int set = s < 0 ? MPIX_SPLIT_OFF : s;
      MPIX_Comm_set_split(sub, set);
      int got_c = -99, got_d = -99;
      MPIX_Comm_get_split(sub, 0, &got_c);
      MPIX_Comm_get_split(sub, 1, &got_d);
      chk_context("size %d S %d", k, s);
      check_ll("MPIX_Comm_get_split constant", set, got_c);
      check_ll("MPIX_Comm_get_split doubling", set, got_d);

      for (int root = 0; root < k; ++root) {
        /* The five collectives of a root are outstanding together (posted
         * in the same order on every rank), then completed by Waitall. */
        MPI_Request reqs[5];
        chk_context("size %d S %d root %d", k, s, root);
        for (int i = 0; i < COUNT; ++i) {
          buf[i] = rank == root ? value(root, root, i) : -1;
          in[i] = value(rank, root, i);
          red[i] = -1;
          gin[i] = value(rank, root, i);
          sout[i] = -1;
          affine_of(rank, i, &mine[2 * i]);
        }
        memset(out, 0, sizeof out);
        for (int i = 0; i < COUNT * k; ++i) gathered[i] = -1;
        if (rank == root)
          for (int r = 0; r < k; ++r)
            for (int i = 0; i < COUNT; ++i)
              scatter_src[r * COUNT + i] = value(r, root, i) + 7;
        MPI_Ibcast(buf, COUNT, MPI_INT, root, sub, &reqs[0]);
        MPI_Ireduce(in, red, COUNT, MPI_INT, MPI_SUM, root, sub, &reqs[1]);
        MPI_Ireduce(mine, out, COUNT, affine, op_compose, root, sub, &reqs[2]);
        MPI_Igather(gin, COUNT, MPI_INT, gathered, COUNT, MPI_INT, root, sub,
                    &reqs[3]);
        MPI_Iscatter(scatter_src, COUNT, MPI_INT, sout, COUNT, MPI_INT, root,
                     sub, &reqs[4]);
        compute(2000);
        MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE);

        for (int i = 0; i < COUNT; ++i) {
          check_ll("Ibcast", value(root, root, i), buf[i]);
          check_ll("Iscatter", value(rank, root, i) + 7, sout[i]);
        }
        if (rank == root) {
          for (int i = 0; i < COUNT; ++i) {
            long long want = 0;
            for (int r = 0; r < k; ++r) want += value(r, root, i);
            check_ll("Ireduce sum", want, red[i]);
            uint32_t acc[2];
            affine_of(k - 1, i, acc);
            for (int r = k - 2; r >= 0; --r) {
              uint32_t p[2];
              affine_of(r, i, p);
              int one = 1;
              compose(p, acc, &one, NULL);
            }
            check_ll("Ireduce non-commutative a", acc[0], out[2 * i]);
            check_ll("Ireduce non-commutative b", acc[1], out[2 * i + 1]);
          }
          for (int r = 0; r < k; ++r)
            for (int i = 0; i < COUNT; ++i)
              check_ll("Igather", value(r, root, i), gathered[r * COUNT + i]);
        }
      }

      /* Iallreduce */
      MPI_Request req;
      chk_context("size %d S %d", k, s);
      for (int i = 0; i < COUNT; ++i) {
        buf[i] = value(rank, 0, i);
        all[i] = -1;
      }
      MPI_Iallreduce(buf, all, COUNT, MPI_INT, MPI_SUM, sub, &req);
      compute(2000);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      for (int i = 0; i < COUNT; ++i) {
        long long want = 0;
        for (int r = 0; r < k; ++r) want += value(r, 0, i);
        check_ll("Iallreduce", want, all[i]);
      }

      if (big) {
        const int root = k - 1;
        for (int i = 0; i < big_count; ++i)
          bigbuf[i] = rank == root ? i * 3 + k : -1;
        MPI_Ibcast(bigbuf, big_count, MPI_INT, root, sub, &req);
        compute(20000);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        long long bad_bcast = 0;
        for (int i = 0; i < big_count; ++i) bad_bcast += bigbuf[i] != i * 3 + k;
        check_ll("big Ibcast wrong elements", 0, bad_bcast);
        for (int i = 0; i < big_count; ++i) bigbuf[i] = rank + i;
        MPI_Ireduce(bigbuf, bigred, big_count, MPI_INT, MPI_SUM, root, sub,
                    &req);
        compute(20000);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank == root) {
          long long bad_reduce = 0;
          for (int i = 0; i < big_count; ++i)
            bad_reduce += bigred[i] != k * (k - 1) / 2 + k * i;
          check_ll("big Ireduce wrong elements", 0, bad_reduce);
        }
      }
    }
    MPI_Comm_free(&sub);
  }
  free(gathered);
  free(scatter_src);
  free(bigbuf);
  free(bigred);
  MPI_Op_free(&op_compose);
  MPI_Type_free(&affine);
  int rc = chk_finish("split_check");
  MPI_Finalize();
  return rc;
}
