// MadMPI process topologies: cartesian grids (MPI_Cart_*), graphs
// (MPI_Graph_*) and distributed graphs (MPI_Dist_graph_*), and each rank's
// neighbourhood in them (Comm::neighbors), which the neighbourhood
// collectives (neighbor.cc) exchange along. Ranks are never reordered.
#include <mpi.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "nmad/coll/schedule.h"
#include "nmad/mpi/internal/args.h"
#include "nmad/mpi/internal/comm.h"
#include "nmad/mpi/internal/state.h"

namespace rondo::nmad::mpi {
namespace {

CommPtr CartComm(State& st, MPI_Comm comm, const char* fn, int* err) {
  CommPtr c = CheckComm(st, comm, fn, err);
  if (c && c->topo != MPI_CART) {
    *err = RaiseError(c.get(), MPI_ERR_TOPOLOGY, fn,
                      "comm has no cartesian topology");
    return nullptr;
  }
  return c;
}

CommPtr GraphComm(State& st, MPI_Comm comm, const char* fn, int* err) {
  CommPtr c = CheckComm(st, comm, fn, err);
  if (c && c->topo != MPI_GRAPH) {
    *err = RaiseError(c.get(), MPI_ERR_TOPOLOGY, fn,
                      "comm has no graph topology (MPI_Graph_create)");
    return nullptr;
  }
  return c;
}

// Row-major coordinates of `rank` in `dims`.
std::vector<int> Coords(const std::vector<int>& dims, int rank) {
  std::vector<int> c(dims.size());
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    c[i] = rank % dims[i];
    rank /= dims[i];
  }
  return c;
}

// The rank one step along dimension d from `coords` (delta = -1 or +1), or
// MPI_PROC_NULL past a non-periodic border.
int Step(const Comm& c, std::vector<int> coords, int d, int delta) {
  coords[d] += delta;
  if (coords[d] < 0 || coords[d] >= c.dims[d]) {
    if (!c.periods[d]) return MPI_PROC_NULL;
    coords[d] = (coords[d] % c.dims[d] + c.dims[d]) % c.dims[d];
  }
  int r = 0;
  for (size_t i = 0; i < coords.size(); ++i) r = r * c.dims[i] + coords[i];
  return r;
}

// Tags of a list of graph edges: the k-th edge to (or from) the same rank
// gets k.
std::vector<uint32_t> OccurrenceTags(const std::vector<int>& peers) {
  std::map<int, uint32_t> seen;
  std::vector<uint32_t> tags(peers.size());
  for (size_t i = 0; i < peers.size(); ++i)
    tags[i] = seen[peers[i]]++ % (coll::kMaxStepTag + 1);
  return tags;
}

// Creates a topology's communicator over comm_old's first `n` ranks (all
// of them for the distributed graphs), named after its parent and `kind`,
// with `topo` set; *out is MPI_COMM_NULL and *made null on the ranks past
// n. Every rank of comm_old takes a child sequence number, so that the
// names agree.
int MakeTopoComm(State& st, Comm& c, int n, const char* kind, int topo,
                 MPI_Comm* out, CommPtr* made, const char* fn) {
  const uint64_t seq = c.child_seq.fetch_add(1);
  *out = MPI_COMM_NULL;
  made->reset();
  if (c.rank >= n) return MPI_SUCCESS;
  std::vector<int> members(c.world.begin(), c.world.begin() + n);
  const int err = MakeComm(st, c, c.id + "." + std::to_string(seq) + kind,
                           std::move(members), out, fn);
  if (err != MPI_SUCCESS) return err;
  *made = st.comms.Get(*out);
  (*made)->topo = topo;
  return MPI_SUCCESS;
}

}  // namespace

void SetNeighborhood(Comm& c) {
  Neighborhood nb;
  if (c.topo == MPI_CART) {
    const std::vector<int> coords = Coords(c.dims, c.rank);
    for (size_t d = 0; d < c.dims.size(); ++d) {
      const int lo = Step(c, coords, static_cast<int>(d), -1);
      const int hi = Step(c, coords, static_cast<int>(d), +1);
      // 2d travels towards -1, 2d + 1 towards +1 (wrapped past 4095
      // dimensions, which no grid has).
      const uint32_t down = (2 * d) % (coll::kMaxStepTag + 1);
      const uint32_t up = (2 * d + 1) % (coll::kMaxStepTag + 1);
      nb.out.insert(nb.out.end(), {lo, hi});
      nb.out_tags.insert(nb.out_tags.end(), {down, up});
      nb.in.insert(nb.in.end(), {lo, hi});
      nb.in_tags.insert(nb.in_tags.end(), {up, down});
    }
  } else if (c.topo == MPI_GRAPH) {
    const int lo = c.rank == 0 ? 0 : c.graph_index[c.rank - 1];
    const int hi = c.graph_index[c.rank];
    nb.out.assign(c.graph_edges.begin() + lo, c.graph_edges.begin() + hi);
    nb.in = nb.out;
    nb.out_tags = OccurrenceTags(nb.out);
    nb.in_tags = nb.out_tags;
  } else if (c.topo == MPI_DIST_GRAPH) {
    nb.in = c.sources;
    nb.out = c.destinations;
    nb.in_tags = OccurrenceTags(nb.in);
    nb.out_tags = OccurrenceTags(nb.out);
  }
  c.neighbors = std::move(nb);
}

}  // namespace rondo::nmad::mpi

using namespace rondo::nmad::mpi;  // NOLINT: the C API's implementation

extern "C" {

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  RONDO_MPI_ENTER("MPI_Dims_create");
  if (nnodes < 1 || ndims < 0 || (ndims > 0 && dims == nullptr))
    return RaiseError(nullptr, MPI_ERR_DIMS, kFn,
                      "nnodes = " + std::to_string(nnodes) + ", ndims = " +
                          std::to_string(ndims) +
                          " (need nnodes >= 1, ndims >= 0, dims not NULL)");
  int fixed = 1;
  std::vector<int> free_dims;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0)
      return RaiseError(nullptr, MPI_ERR_DIMS, kFn,
                        "dims[" + std::to_string(i) + "] = " +
                            std::to_string(dims[i]) + " (must be >= 0)");
    if (dims[i] > 0) fixed *= dims[i];
    else free_dims.push_back(i);
  }
  if (nnodes % fixed != 0)
    return RaiseError(nullptr, MPI_ERR_DIMS, kFn,
                      "nnodes = " + std::to_string(nnodes) +
                          " is not a multiple of the product of the fixed "
                          "dims (" + std::to_string(fixed) + ")");
  int rest = nnodes / fixed;
  if (free_dims.empty()) {
    if (rest != 1)
      return RaiseError(nullptr, MPI_ERR_DIMS, kFn,
                        "the fixed dims do not multiply to nnodes");
    return MPI_SUCCESS;
  }
  // Prime factors, largest first, each onto the smallest free dimension.
  std::vector<int> factors;
  for (int p = 2; p * p <= rest; ++p)
    while (rest % p == 0) {
      factors.push_back(p);
      rest /= p;
    }
  if (rest > 1) factors.push_back(rest);
  std::sort(factors.rbegin(), factors.rend());
  std::vector<int> d(free_dims.size(), 1);
  for (int f : factors) *std::min_element(d.begin(), d.end()) *= f;
  std::sort(d.rbegin(), d.rend());
  for (size_t i = 0; i < free_dims.size(); ++i) dims[free_dims[i]] = d[i];
  return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                    const int periods[], int reorder, MPI_Comm* comm_cart) {
  RONDO_MPI_ENTER_COMM("MPI_Cart_create", comm_old);
  (void)reorder;  // ranks keep their order
  if (ndims < 0 || (ndims > 0 && (dims == nullptr || periods == nullptr)) ||
      comm_cart == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "ndims = " + std::to_string(ndims) +
                          " (must be >= 0, with dims, periods and comm_cart "
                          "not NULL)");
  int64_t total = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0)
      return RaiseError(c.get(), MPI_ERR_DIMS, kFn,
                        "dims[" + std::to_string(i) + "] = " +
                            std::to_string(dims[i]) + " (must be > 0)");
    total *= dims[i];
  }
  if (total > c->size)
    return RaiseError(c.get(), MPI_ERR_TOPOLOGY, kFn,
                      "the grid has " + std::to_string(total) +
                          " processes but comm_old only " +
                          std::to_string(c->size));
  CommPtr n;
  err = MakeTopoComm(*st, *c, total, "cart", MPI_CART, comm_cart, &n, kFn);
  if (err != MPI_SUCCESS || !n) return err;
  n->dims.assign(dims, dims + ndims);
  n->periods.resize(ndims);
  for (int i = 0; i < ndims; ++i) n->periods[i] = periods[i] != 0;
  SetNeighborhood(*n);
  return MPI_SUCCESS;
}


int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  RONDO_MPI_ENTER("MPI_Cart_coords");
  int err = MPI_SUCCESS;
  CommPtr c = CartComm(*st, comm, kFn, &err);
  if (!c) return err;
  const int nd = static_cast<int>(c->dims.size());
  if (rank < 0 || rank >= c->size)
    return RaiseError(c.get(), MPI_ERR_RANK, kFn,
                      "rank = " + std::to_string(rank) + " (must be 0.." +
                          std::to_string(c->size - 1) + ")");
  if (maxdims < nd || (nd > 0 && coords == nullptr))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "maxdims = " + std::to_string(maxdims) +
                          " (the grid has " + std::to_string(nd) +
                          " dimensions)");
  int r = rank;
  for (int i = nd - 1; i >= 0; --i) {
    coords[i] = r % c->dims[i];
    r /= c->dims[i];
  }
  return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  RONDO_MPI_ENTER("MPI_Cart_rank");
  int err = MPI_SUCCESS;
  CommPtr c = CartComm(*st, comm, kFn, &err);
  if (!c) return err;
  const int nd = static_cast<int>(c->dims.size());
  if (rank == nullptr || (nd > 0 && coords == nullptr))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "coords or rank is NULL");
  int r = 0;
  for (int i = 0; i < nd; ++i) {
    int x = coords[i];
    if (c->periods[i]) {
      x %= c->dims[i];
      if (x < 0) x += c->dims[i];
    } else if (x < 0 || x >= c->dims[i]) {
      return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                        "coords[" + std::to_string(i) + "] = " +
                            std::to_string(x) + " is outside the " +
                            "non-periodic dimension 0.." +
                            std::to_string(c->dims[i] - 1));
    }
    r = r * c->dims[i] + x;
  }
  *rank = r;
  return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                 int coords[]) {
  RONDO_MPI_ENTER("MPI_Cart_get");
  int err = MPI_SUCCESS;
  CommPtr c = CartComm(*st, comm, kFn, &err);
  if (!c) return err;
  const int nd = static_cast<int>(c->dims.size());
  if (maxdims < nd)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "maxdims = " + std::to_string(maxdims) +
                          " (the grid has " + std::to_string(nd) +
                          " dimensions)");
  for (int i = 0; i < nd; ++i) {
    if (dims) dims[i] = c->dims[i];
    if (periods) periods[i] = c->periods[i];
  }
  if (coords) return PMPI_Cart_coords(comm, c->rank, maxdims, coords);
  return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  RONDO_MPI_ENTER("MPI_Cartdim_get");
  int err = MPI_SUCCESS;
  CommPtr c = CartComm(*st, comm, kFn, &err);
  if (!c) return err;
  if (ndims == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "ndims is NULL");
  *ndims = static_cast<int>(c->dims.size());
  return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                   int* rank_dest) {
  RONDO_MPI_ENTER("MPI_Cart_shift");
  int err = MPI_SUCCESS;
  CommPtr c = CartComm(*st, comm, kFn, &err);
  if (!c) return err;
  const int nd = static_cast<int>(c->dims.size());
  if (direction < 0 || direction >= nd || rank_source == nullptr ||
      rank_dest == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "direction = " + std::to_string(direction) +
                          " (must be 0.." + std::to_string(nd - 1) +
                          ", with rank_source and rank_dest not NULL)");
  std::vector<int> coords(nd);
  (void)PMPI_Cart_coords(comm, c->rank, nd, coords.data());
  auto at = [&](int delta) {
    std::vector<int> x = coords;
    x[direction] += delta;
    if (!c->periods[direction] &&
        (x[direction] < 0 || x[direction] >= c->dims[direction]))
      return MPI_PROC_NULL;
    int r = 0;
    (void)PMPI_Cart_rank(comm, x.data(), &r);
    return r;
  };
  *rank_dest = at(disp);
  *rank_source = at(-disp);
  return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  RONDO_MPI_ENTER_COMM("MPI_Topo_test", comm);
  if (status == nullptr) return RaiseError(c.get(), MPI_ERR_ARG, kFn, "status is NULL");
  *status = c->topo;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                   const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[],
                                   const int destweights[], MPI_Info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  RONDO_MPI_ENTER_COMM("MPI_Dist_graph_create_adjacent", comm_old);
  (void)reorder;
  if (indegree < 0 || outdegree < 0 || comm_dist_graph == nullptr ||
      (indegree > 0 && sources == nullptr) ||
      (outdegree > 0 && destinations == nullptr))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "indegree = " + std::to_string(indegree) +
                          ", outdegree = " + std::to_string(outdegree) +
                          " (must be >= 0 with their arrays not NULL)");
  for (int i = 0; i < indegree; ++i)
    if (!CheckRank(sources[i], *c, false, kFn, &err, "sources[i]") ||
        sources[i] == MPI_PROC_NULL)
      return err != MPI_SUCCESS ? err
                                : RaiseError(c.get(), MPI_ERR_RANK, kFn,
                                             "sources holds MPI_PROC_NULL");
  for (int i = 0; i < outdegree; ++i)
    if (!CheckRank(destinations[i], *c, false, kFn, &err,
                   "destinations[i]") ||
        destinations[i] == MPI_PROC_NULL)
      return err != MPI_SUCCESS
                 ? err
                 : RaiseError(c.get(), MPI_ERR_RANK, kFn,
                              "destinations holds MPI_PROC_NULL");
  CommPtr n;
  err = MakeTopoComm(*st, *c, c->size, "dg", MPI_DIST_GRAPH, comm_dist_graph,
                     &n, kFn);
  if (err != MPI_SUCCESS) return err;
  n->sources.assign(sources, sources + indegree);
  n->destinations.assign(destinations, destinations + outdegree);
  n->weighted = sourceweights != MPI_UNWEIGHTED &&
                destweights != MPI_UNWEIGHTED;
  if (n->weighted) {
    if (sourceweights && sourceweights != MPI_WEIGHTS_EMPTY)
      n->source_weights.assign(sourceweights, sourceweights + indegree);
    if (destweights && destweights != MPI_WEIGHTS_EMPTY)
      n->dest_weights.assign(destweights, destweights + outdegree);
  }
  SetNeighborhood(*n);
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree,
                                   int* outdegree, int* weighted) {
  RONDO_MPI_ENTER_COMM("MPI_Dist_graph_neighbors_count", comm);
  if (c->topo != MPI_DIST_GRAPH)
    return RaiseError(c.get(), MPI_ERR_TOPOLOGY, kFn,
                      "comm has no distributed graph topology");
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "indegree, outdegree and weighted must not be NULL");
  *indegree = static_cast<int>(c->sources.size());
  *outdegree = static_cast<int>(c->destinations.size());
  *weighted = c->weighted;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                             int sourceweights[], int maxoutdegree,
                             int destinations[], int destweights[]) {
  RONDO_MPI_ENTER_COMM("MPI_Dist_graph_neighbors", comm);
  if (c->topo != MPI_DIST_GRAPH)
    return RaiseError(c.get(), MPI_ERR_TOPOLOGY, kFn,
                      "comm has no distributed graph topology");
  const int in = std::min<int>(maxindegree, c->sources.size());
  const int out = std::min<int>(maxoutdegree, c->destinations.size());
  for (int i = 0; i < in; ++i) {
    if (sources) sources[i] = c->sources[i];
    if (c->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
        i < static_cast<int>(c->source_weights.size()))
      sourceweights[i] = c->source_weights[i];
  }
  for (int i = 0; i < out; ++i) {
    if (destinations) destinations[i] = c->destinations[i];
    if (c->weighted && destweights && destweights != MPI_UNWEIGHTED &&
        i < static_cast<int>(c->dest_weights.size()))
      destweights[i] = c->dest_weights[i];
  }
  return MPI_SUCCESS;
}


int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  RONDO_MPI_ENTER("MPI_Cart_sub");
  int err = MPI_SUCCESS;
  CommPtr c = CartComm(*st, comm, kFn, &err);
  if (!c) return err;
  const int nd = static_cast<int>(c->dims.size());
  if ((nd > 0 && remain_dims == nullptr) || newcomm == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "remain_dims or newcomm is NULL");
  // Ranks that share the coordinates of the dropped dimensions form one
  // sub-grid, ordered row-major by the kept ones (as their ranks already
  // are).
  const std::vector<int> coords = Coords(c->dims, c->rank);
  int color = 0;
  std::vector<int> dims, periods;
  for (int i = 0; i < nd; ++i) {
    if (remain_dims[i]) {
      dims.push_back(c->dims[i]);
      periods.push_back(c->periods[i]);
    } else {
      color = color * c->dims[i] + coords[i];
    }
  }
  err = SplitComm(*st, c, color, c->rank, newcomm, kFn);
  if (err != MPI_SUCCESS) return err;
  CommPtr n = st->comms.Get(*newcomm);
  n->topo = MPI_CART;
  n->dims = std::move(dims);
  n->periods = std::move(periods);
  SetNeighborhood(*n);
  return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                     const int edges[], int reorder, MPI_Comm* comm_graph) {
  RONDO_MPI_ENTER_COMM("MPI_Graph_create", comm_old);
  (void)reorder;  // ranks keep their order
  if (comm_graph == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "comm_graph is NULL");
  if (nnodes < 0 || nnodes > c->size)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "nnodes = " + std::to_string(nnodes) + " (must be 0.." +
                          std::to_string(c->size) +
                          ", the size of comm_old)");
  if (nnodes > 0 && (index == nullptr || edges == nullptr))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "index or edges is NULL");
  for (int i = 0; i < nnodes; ++i)
    if (index[i] < (i ? index[i - 1] : 0))
      return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                        "index[" + std::to_string(i) + "] = " +
                            std::to_string(index[i]) +
                            " (index must be non-decreasing from 0: index[i] "
                            "is the number of edges of nodes 0..i)");
  const int nedges = nnodes ? index[nnodes - 1] : 0;
  for (int e = 0; e < nedges; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes)
      return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                        "edges[" + std::to_string(e) + "] = " +
                            std::to_string(edges[e]) + " (must be 0.." +
                            std::to_string(nnodes - 1) + ")");
  CommPtr n;
  err = MakeTopoComm(*st, *c, nnodes, "graph", MPI_GRAPH, comm_graph, &n,
                     kFn);
  if (err != MPI_SUCCESS || !n) return err;
  n->graph_index.assign(index, index + nnodes);
  n->graph_edges.assign(edges, edges + nedges);
  SetNeighborhood(*n);
  return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  RONDO_MPI_ENTER("MPI_Graphdims_get");
  int err = MPI_SUCCESS;
  CommPtr c = GraphComm(*st, comm, kFn, &err);
  if (!c) return err;
  if (nnodes == nullptr || nedges == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "nnodes or nedges is NULL");
  *nnodes = static_cast<int>(c->graph_index.size());
  *nedges = static_cast<int>(c->graph_edges.size());
  return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                  int edges[]) {
  RONDO_MPI_ENTER("MPI_Graph_get");
  int err = MPI_SUCCESS;
  CommPtr c = GraphComm(*st, comm, kFn, &err);
  if (!c) return err;
  if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == nullptr) ||
      (maxedges > 0 && edges == nullptr))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "maxindex = " + std::to_string(maxindex) +
                          ", maxedges = " + std::to_string(maxedges) +
                          " (must be >= 0, with their arrays not NULL)");
  const int ni = std::min<int>(maxindex, c->graph_index.size());
  const int ne = std::min<int>(maxedges, c->graph_edges.size());
  std::copy_n(c->graph_index.begin(), ni, index);
  std::copy_n(c->graph_edges.begin(), ne, edges);
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  RONDO_MPI_ENTER("MPI_Graph_neighbors_count");
  int err = MPI_SUCCESS;
  CommPtr c = GraphComm(*st, comm, kFn, &err);
  if (!c) return err;
  if (rank < 0 || rank >= c->size)
    return RaiseError(c.get(), MPI_ERR_RANK, kFn,
                      "rank = " + std::to_string(rank) + " (must be 0.." +
                          std::to_string(c->size - 1) + ")");
  if (nneighbors == nullptr)
    return RaiseError(c.get(), MPI_ERR_ARG, kFn, "nneighbors is NULL");
  *nneighbors = c->graph_index[rank] - (rank ? c->graph_index[rank - 1] : 0);
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                        int neighbors[]) {
  RONDO_MPI_ENTER("MPI_Graph_neighbors");
  int err = MPI_SUCCESS;
  CommPtr c = GraphComm(*st, comm, kFn, &err);
  if (!c) return err;
  if (rank < 0 || rank >= c->size)
    return RaiseError(c.get(), MPI_ERR_RANK, kFn,
                      "rank = " + std::to_string(rank) + " (must be 0.." +
                          std::to_string(c->size - 1) + ")");
  if (maxneighbors < 0 || (maxneighbors > 0 && neighbors == nullptr))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "maxneighbors = " + std::to_string(maxneighbors) +
                          " (must be >= 0, with neighbors not NULL)");
  const int lo = rank ? c->graph_index[rank - 1] : 0;
  const int n = std::min(maxneighbors, c->graph_index[rank] - lo);
  std::copy_n(c->graph_edges.begin() + lo, n, neighbors);
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                          const int degrees[], const int destinations[],
                          const int weights[], MPI_Info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  RONDO_MPI_ENTER_COMM("MPI_Dist_graph_create", comm_old);
  (void)reorder;
  if (comm_dist_graph == nullptr || n < 0 ||
      (n > 0 && (sources == nullptr || degrees == nullptr)))
    return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                      "n = " + std::to_string(n) +
                          " (must be >= 0, with sources, degrees and "
                          "comm_dist_graph not NULL)");
  // This rank's edges as (source, destination, weight) triples.
  std::vector<int> mine;
  int64_t k = 0;
  for (int i = 0; i < n; ++i) {
    if (degrees[i] < 0)
      return RaiseError(c.get(), MPI_ERR_ARG, kFn,
                        "degrees[" + std::to_string(i) + "] = " +
                            std::to_string(degrees[i]) + " (must be >= 0)");
    if (!CheckRank(sources[i], *c, false, kFn, &err, "sources[i]"))
      return err;
    for (int j = 0; j < degrees[i]; ++j, ++k) {
      if (destinations == nullptr)
        return RaiseError(c.get(), MPI_ERR_ARG, kFn, "destinations is NULL");
      if (!CheckRank(destinations[k], *c, false, kFn, &err,
                     "destinations[i]"))
        return err;
      if (sources[i] == MPI_PROC_NULL || destinations[k] == MPI_PROC_NULL)
        return RaiseError(c.get(), MPI_ERR_RANK, kFn,
                          "sources or destinations holds MPI_PROC_NULL");
      const bool has_weights = weights != MPI_UNWEIGHTED &&
                               weights != MPI_WEIGHTS_EMPTY &&
                               weights != nullptr;
      mine.insert(mine.end(), {sources[i], destinations[k],
                               has_weights ? weights[k] : 1});
    }
  }
  // Every rank learns every edge (an allgatherv of the triples), then keeps
  // those it is an end of, in (contributing rank, position) order on both
  // ends, so the k-th edge between two ranks is the same edge for both.
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(c->size), displs(c->size);
  err = PMPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_old);
  if (err != MPI_SUCCESS) return err;
  int total = 0;
  for (int r = 0; r < c->size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<int> all(total);
  err = PMPI_Allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(),
                       displs.data(), MPI_INT, comm_old);
  if (err != MPI_SUCCESS) return err;
  // Weighted unless every rank said MPI_UNWEIGHTED: MPI requires all ranks
  // to agree, so this rank's word stands for all.
  const bool weighted = weights != MPI_UNWEIGHTED;
  std::vector<int> in, out, in_w, out_w;
  for (int e = 0; e + 2 < total; e += 3) {
    const int from = all[e], to = all[e + 1], w = all[e + 2];
    if (to == c->rank) {
      in.push_back(from);
      in_w.push_back(w);
    }
    if (from == c->rank) {
      out.push_back(to);
      out_w.push_back(w);
    }
  }
  CommPtr g;
  err = MakeTopoComm(*st, *c, c->size, "dgc", MPI_DIST_GRAPH, comm_dist_graph,
                     &g, kFn);
  if (err != MPI_SUCCESS) return err;
  g->sources = std::move(in);
  g->destinations = std::move(out);
  g->weighted = weighted;
  if (weighted) {
    g->source_weights = std::move(in_w);
    g->dest_weights = std::move(out_w);
  }
  SetNeighborhood(*g);
  return MPI_SUCCESS;
}

}  // extern "C"

// The profiling interface (MPI-4 §15.2): each function above is defined
// as its PMPI_ name, and the MPI_ name is a weak alias of it, so that a
// tool (mpiP, TAU, Score-P) may define MPI_ functions of its own and call
// the PMPI_ ones; tools/mpi_pmpi.py checks that every mpi.h function has
// both symbols.
#pragma weak MPI_Dims_create = PMPI_Dims_create
#pragma weak MPI_Cart_create = PMPI_Cart_create
#pragma weak MPI_Cart_coords = PMPI_Cart_coords
#pragma weak MPI_Cart_rank = PMPI_Cart_rank
#pragma weak MPI_Cart_get = PMPI_Cart_get
#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
#pragma weak MPI_Cart_shift = PMPI_Cart_shift
#pragma weak MPI_Topo_test = PMPI_Topo_test
#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
#pragma weak MPI_Graph_create = PMPI_Graph_create
#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
#pragma weak MPI_Graph_get = PMPI_Graph_get
#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
