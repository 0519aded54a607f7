// The MadMPI layer's state: the one documented global instance behind the C
// API (mpi.h is a C interface, so its objects live somewhere the C calls can
// reach). MPI_Init creates it, MPI_Finalize destroys it; every MPI_* call
// goes through Mpi(). It owns the Rondo engine, the nmad Core and the handle
// tables that map MPI's int handles to C++ objects.
//
// Communicators: each one has two nmad sessions, one for point-to-point and
// one for collectives, so user messages and collective messages never match
// each other; sessions are named deterministically from the parent
// communicator (all members create a communicator collectively, in the same
// order), which is how every rank opens the same sessions without talking.
//
// Thread-safety: MPI_THREAD_MULTIPLE. Handle tables are guarded by spin
// locks held only for the lookup; objects are shared_ptr, so a handle freed
// by one thread while another uses the object (a datatype freed while a
// collective that uses it is in flight) stays alive until the last use.
// Two exceptions keep the point-to-point fast path free of locks, mallocs
// and reference counts: requests come from a lock-free pool (RequestTable,
// handle_pool.h), and the predefined communicators and datatypes, which
// outlive every request, are borrowed (ObjRef) rather than shared.
#ifndef RONDO_NMAD_MPI_INTERNAL_STATE_H_
#define RONDO_NMAD_MPI_INTERNAL_STATE_H_

#include <mpi.h>

#include <array>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "nmad/coll/algorithms.h"
#include "nmad/coll/executor.h"
#include "nmad/coll/splittree_model.h"
#include "nmad/core.h"
#include "nmad/mpi/datatype.h"
#include "nmad/mpi/internal/handle_pool.h"
#include "nmad/mpi/op.h"
#include "queues/spin_lock.h"

namespace rondo::nmad::mpi {

using TypePtr = std::shared_ptr<const Datatype>;

struct Group {
  std::vector<int> world;  // group rank -> job rank
  int RankOf(int job_rank) const {
    for (size_t i = 0; i < world.size(); ++i)
      if (world[i] == job_rank) return static_cast<int>(i);
    return MPI_UNDEFINED;
  }
};
using GroupPtr = std::shared_ptr<const Group>;

// A prepared collective schedule depends on these arguments only (for the
// collectives without per-rank counts); Comm caches schedules by them.
struct ScheduleKey {
  int collective = 0;
  int algorithm = 0;
  int root = 0;
  uint64_t bytes = 0;
  uint64_t elem_size = 0;
  bool commutative = true;
  int split = -1;  // split-tree level, -1 = not split
  // Neighbourhood collectives (neighbor.cc): the blocks' strides.
  uint64_t send_stride = 0;
  uint64_t recv_stride = 0;
  bool operator==(const ScheduleKey&) const = default;
};
struct ScheduleKeyHash {
  size_t operator()(const ScheduleKey& k) const noexcept {
    uint64_t h = k.bytes * 0x9e3779b97f4a7c15ull;
    h ^= (static_cast<uint64_t>(k.collective) << 48) ^
         (static_cast<uint64_t>(k.algorithm) << 40) ^
         (static_cast<uint64_t>(k.root) << 8) ^ k.elem_size * 31 ^
         (k.commutative ? 1 : 0) ^ (static_cast<uint64_t>(k.split + 1) << 56) ^
         k.send_stride * 0xff51afd7ed558ccdull ^ k.recv_stride * 0xc4ceb9fe1a85ec53ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// An info object (MPI_Info_*): key/value pairs in the order the keys were
// first set, which is how MPI_Info_get_nthkey numbers them (as Open MPI and
// MPICH do); setting a key again changes its value in place. Guarded by
// State::detached_mu wherever it is shared (the info table, Comm::info).
struct Info {
  std::vector<std::pair<std::string, std::string>> entries;
  const std::string* Find(const std::string& key) const {
    for (const auto& [k, v] : entries)
      if (k == key) return &v;
    return nullptr;
  }
  void Set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : entries)
      if (k == key) {
        v = value;
        return;
      }
    entries.emplace_back(key, value);
  }
  bool Erase(const std::string& key) {
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (it->first == key) {
        entries.erase(it);
        return true;
      }
    return false;
  }
};

// A user attribute key (MPI_Comm_create_keyval). It stays in State::keyvals
// after MPI_Comm_free_keyval while attributes still use it (as in Open MPI
// and MPICH: their delete callbacks still run, and their values are still
// readable), and leaves the table with the last of them. `freed` and
// `uses` are guarded by State::attr_mu.
struct Keyval {
  int handle = 0;
  MPI_Comm_copy_attr_function* copy_fn = nullptr;
  MPI_Comm_delete_attr_function* delete_fn = nullptr;
  void* extra_state = nullptr;
  bool freed = false;
  int uses = 0;
};

// An attribute of a communicator: a user key and its value.
struct Attribute {
  std::shared_ptr<Keyval> key;
  void* value = nullptr;
};

// A rank's neighbours in its communicator's process topology, in the order
// of MPI_Cart_shift (per dimension the -1 then the +1 neighbour),
// MPI_Graph_neighbors or MPI_Dist_graph_neighbors, with MPI_PROC_NULL kept
// (its block is skipped), and each edge's step tag for the neighbourhood
// collectives (nmad/coll/neighbor.h): on a cartesian grid the direction the
// message travels (2d towards -1, 2d + 1 towards +1, so a periodic
// dimension of one or two ranks still fills the right slots); on graphs the
// k-th edge between two ranks has tag k on both sides (mod 4096).
struct Neighborhood {
  std::vector<int> in, out;
  std::vector<uint32_t> in_tags, out_tags;
};

struct CollShm;  // coll_shm.cc

struct Comm {
  MPI_Comm handle = MPI_COMM_NULL;
  std::string id;    // unique in the job: the sessions' base name
  std::string name;  // MPI_Comm_set_name
  std::vector<int> world;       // comm rank -> job rank
  std::vector<int> from_world;  // job rank -> comm rank (-1: not a member)
  int rank = 0;
  int size = 0;
  Session* p2p = nullptr;
  Session* coll = nullptr;
  std::atomic<uint64_t> coll_seq{0};   // one per collective call
  std::atomic<uint64_t> child_seq{0};  // one per communicator creation
  std::atomic<MPI_Errhandler> errhandler{MPI_ERRORS_ARE_FATAL};
  // MPIX_Comm_set_split: MPIX_SPLIT_DEFAULT (follow RONDO_SPLIT_S),
  // MPIX_SPLIT_OFF, MPIX_SPLIT_AUTO or a fixed S >= 0.
  std::atomic<int> split{MPIX_SPLIT_DEFAULT};
  // Prepared schedules of recent collectives (bounded; see coll.cc).
  std::mutex schedules_mu;
  std::unordered_map<ScheduleKey, std::shared_ptr<const coll::PreparedSchedule>,
                     ScheduleKeyHash>
      schedules;
  // Process topology (MPI_Topo_test).
  int topo = MPI_UNDEFINED;
  std::vector<int> dims, periods;          // cartesian
  std::vector<int> sources, destinations;  // distributed graph
  std::vector<int> source_weights, dest_weights;
  bool weighted = false;
  std::vector<int> graph_index, graph_edges;  // graph (MPI_Graph_create)
  Neighborhood neighbors;  // filled with the topology (topo.cc)
  // Attributes with user keys, in the order they were set (setting a key
  // again moves it to the end): deletions run in reverse (attr.cc). Guarded
  // by State::attr_mu; callbacks run without it.
  std::vector<Attribute> attrs;
  // MPI_Comm_set_info hints (kept, not interpreted); guarded by
  // State::detached_mu.
  Info info;
  // The node-aware small collectives (coll_shm.cc): 0 not tried yet, 1
  // setting up or off, 2 ready (`coll_shm` then holds the segment).
  std::atomic<int> coll_shm_state{0};
  std::shared_ptr<CollShm> coll_shm;
};
using CommPtr = std::shared_ptr<Comm>;


// What a request holds of a communicator or datatype: a borrowed pointer
// for the predefined ones (they live until MPI_Finalize, after every
// request: no reference count on the fast path), or a shared owner for user
// ones, which a request keeps alive while in flight even if the application
// frees the handle meanwhile. Assigning a shared_ptr takes ownership.
template <typename T>
class ObjRef {
 public:
  ObjRef() = default;
  ObjRef(std::shared_ptr<T> p)  // NOLINT: a shared_ptr converts implicitly
      : owner_(std::move(p)), ptr_(owner_.get()) {}
  ObjRef& operator=(std::shared_ptr<T> p) {
    owner_ = std::move(p);
    ptr_ = owner_.get();
    return *this;
  }
  // A predefined object: not counted.
  static ObjRef Borrowed(T* p) {
    ObjRef r;
    r.ptr_ = p;
    return r;
  }
  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  void reset() noexcept {
    ptr_ = nullptr;
    if (owner_) owner_.reset();
  }

 private:
  std::shared_ptr<T> owner_;
  T* ptr_ = nullptr;
};
using CommRef = ObjRef<Comm>;
using TypeRef = ObjRef<const Datatype>;

struct MpiRequest;
class State;
struct Win;  // win.cc

// What makes a request persistent (MPI_Send_init ... MPI_Recv_init, the
// MPI-4 MPI_*_init collectives): MPI_Start calls `start`, which posts one
// round on the request (checked at init: a start only posts). Between a
// completion (MPI_Wait, MPI_Test, ...) and the next MPI_Start the request
// is inactive: it keeps its handle, and the wait and test calls treat it
// like MPI_REQUEST_NULL (an empty status at once).
struct PersistentOp {
  std::function<int(State&, MpiRequest&)> start;
  bool active = false;
  // Collectives: the tag base every start uses (one collective sequence
  // number taken at init, as MPICH does), the prepared schedule, and what
  // packs derived-datatype inputs into their staging at each start.
  uint32_t tag_base = 0;
  std::shared_ptr<const coll::PreparedSchedule> prepared;
  std::vector<std::function<void()>> on_start;
};

// An MPI request: a point-to-point request of the core, or a running
// collective, plus what completion must do (unpack into the user's buffer).
// Point-to-point requests come from State::requests (a pool: no allocation
// once warm); a collective's is made by its call and adopted by the table.
struct MpiRequest {
  enum class Kind { kSend, kRecv, kColl, kDone, kSendrecv, kRma } kind =
      Kind::kDone;
  Request req;                          // point-to-point
  std::unique_ptr<coll::Operation> op;  // collectives
  CommRef comm;
  TypeRef type;          // keeps a user type alive while in flight
  std::vector<TypePtr> more_types;  // alltoallw
  void* user_buf = nullptr;
  int64_t count = 0;
  std::vector<uint8_t> staging;  // packed data of a derived datatype
  bool unpack_on_done = false;   // recv: staging -> user_buf
  // Collectives: staging buffers (packed derived datatypes), the
  // reduction's context, and what to do when the schedule is done (unpack
  // into the user's buffers: runs in the engine task that completes the
  // collective, so the data lands without any MPI call).
  std::vector<std::unique_ptr<uint8_t[]>> stagings;
  std::shared_ptr<void> reduce_ctx;
  std::vector<std::function<void()>> on_complete;
  bool completed = false;
  MPI_Status status{};  // filled at completion
  int error = MPI_SUCCESS;
  bool cancel_requested = false;
  const char* fn = "";  // the MPI function that started it
  int peer = -1;  // the peer's rank in comm, if one (error messages)
  std::unique_ptr<PersistentOp> persistent;  // null: an ordinary request
  // kSendrecv (MPI_Isendrecv, MPI_Isendrecv_replace): the send (0) and the
  // receive (1), each an ordinary request of its own; the request is done
  // when both are, and its status is the receive's.
  std::unique_ptr<std::array<MpiRequest, 2>> halves;
  // kRma (MPI_Rput, MPI_Rget, ...; win.cc): done when `rma_done` says so;
  // `rma_finish` unpacks a read and returns the error code.
  std::function<bool()> rma_done;
  std::function<int()> rma_finish;

  // A persistent request between a completion and its next MPI_Start.
  bool inactive() const noexcept {
    return persistent != nullptr && !persistent->active;
  }

  // Back to the state of a new request, for the pool (the core Request is
  // done or idle: it may start another operation as it is). A staging
  // buffer up to 64 KiB keeps its memory for the next derived-type message.
  void Reset() noexcept {
    op.reset();
    if (!more_types.empty()) more_types.clear();
    if (!stagings.empty()) stagings.clear();
    if (reduce_ctx) reduce_ctx.reset();
    if (!on_complete.empty()) on_complete.clear();
    if (persistent) persistent.reset();
    if (halves) halves.reset();
    if (rma_done) rma_done = nullptr;
    if (rma_finish) rma_finish = nullptr;
    ResetPointToPoint();
  }
  // Reset() of a request only the point-to-point paths used: an ordinary
  // (not persistent) kSend or kRecv, which never set the collective,
  // persistent, sendrecv or one-sided parts (asserted where assert is on:
  // the tests' builds). The release of a completed receive in MPI_Waitall
  // takes this (docs/performance.md).
  void ResetPointToPoint() noexcept {
    assert(!op && more_types.empty() && stagings.empty() && !reduce_ctx &&
           on_complete.empty() && !persistent && !halves && !rma_done &&
           !rma_finish);
    kind = Kind::kDone;
    comm.reset();
    type.reset();
    user_buf = nullptr;
    count = 0;
    if (staging.capacity() > kKeptStagingBytes) [[unlikely]] {
      std::vector<uint8_t>().swap(staging);
    } else {
      staging.clear();
    }
    unpack_on_done = false;
    completed = false;
    // Field by field: `status = {}` compiled to a `rep stosd` of 24 bytes,
    // whose start-up costs more than the five stores (docs/performance.md).
    status.MPI_SOURCE = 0;
    status.MPI_TAG = 0;
    status.MPI_ERROR = 0;
    status.rondo_cancelled = 0;
    status.rondo_bytes = 0;
    error = MPI_SUCCESS;
    cancel_requested = false;
    fn = "";
    peer = -1;
  }
  static constexpr size_t kKeptStagingBytes = 64 * 1024;
};

// The request table: MPI_Request handles of pooled (point-to-point) and
// adopted (collective) requests; see handle_pool.h.
class RequestTable : public HandlePool<MpiRequest> {
 public:
  // A collective's request: its handle, or MPI_REQUEST_NULL when 2^20
  // requests are in flight.
  int Add(std::shared_ptr<MpiRequest> r) { return Adopt(std::move(r)); }
};

// The handle of a send that completed within its call (MPI_Isend of a
// small message that left at once: Session::TrySendNow): nothing is pooled
// behind it. The pool never issues it (its generation bits are 0); MPI_Wait,
// MPI_Test and the rest complete it at once with a send's empty status,
// MPI_Request_free frees it, and starting or cancelling it does what it
// does to any completed send. MPICH's builtin completed requests are the
// same idea.
inline constexpr MPI_Request kSentRequest = 1;
static_assert(kSentRequest > 0 &&
              (kSentRequest >> HandlePool<MpiRequest>::kIndexBits) == 0);

// Handle table: int handle -> shared object. Handles of freed objects are
// not reused (an old copy of a freed handle is then detected as invalid).
template <typename T>
class HandleTable {
 public:
  explicit HandleTable(int first) : next_(first) {}
  int Add(std::shared_ptr<T> obj) {
    std::lock_guard<queues::SpinLock> lock(mu_);
    int h = next_++;
    map_.emplace(h, std::move(obj));
    return h;
  }
  void Set(int h, std::shared_ptr<T> obj) {
    std::lock_guard<queues::SpinLock> lock(mu_);
    map_[h] = std::move(obj);
  }
  std::shared_ptr<T> Get(int h) const {
    std::lock_guard<queues::SpinLock> lock(mu_);
    auto it = map_.find(h);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<T> Remove(int h) {
    std::lock_guard<queues::SpinLock> lock(mu_);
    auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    auto obj = std::move(it->second);
    map_.erase(it);
    return obj;
  }
  size_t size() const {
    std::lock_guard<queues::SpinLock> lock(mu_);
    return map_.size();
  }
  // Every object in the table (a snapshot).
  std::vector<std::shared_ptr<T>> Values() const {
    std::lock_guard<queues::SpinLock> lock(mu_);
    std::vector<std::shared_ptr<T>> out;
    out.reserve(map_.size());
    for (const auto& [h, obj] : map_) out.push_back(obj);
    return out;
  }

 private:
  mutable queues::SpinLock mu_;
  int next_;
  std::unordered_map<int, std::shared_ptr<T>> map_;
};

// Kept in the table once created (a freed handler stays usable by the
// communicators it is attached to); `refs` counts the handles the
// application holds (MPI_Comm_get_errhandler returns a new one).
// Handles are ints, so the communicator, window and session handler
// functions have one C type; `kind` says which object it is made for.
enum class ErrhandlerKind { kComm, kWin, kSession };
struct UserErrhandler {
  MPI_Comm_errhandler_function* fn = nullptr;
  ErrhandlerKind kind = ErrhandlerKind::kComm;
  std::atomic<int> refs{1};
};

// An MPI-4 session (MPI_Session_init): its error handler and the info it
// was made with (MPI_Session_get_info).
struct MpiSession {
  std::atomic<MPI_Errhandler> errhandler{MPI_ERRORS_ARE_FATAL};
  Info info;
  int thread_level = MPI_THREAD_MULTIPLE;
};

class State {
 public:
  // Creates the engine and Core (collective over the job). Throws
  // std::runtime_error with the reason when the job cannot start.
  State();
  ~State();

  engine::Engine& engine() { return *engine_; }
  Core& core() { return *core_; }
  int world_rank() const { return core_->rank(); }
  // Cached at start-up: every receive's completion asks (its status's
  // source), and Core::size() is a call across files.
  int world_size() const { return world_size_; }

  // Creates and registers a communicator over `world` (job ranks in comm
  // rank order; the caller is a member) named `id` (the same on every
  // member). Returns its handle, or MPI_COMM_NULL with *error set.
  MPI_Comm NewComm(std::string id, std::vector<int> world,
                   std::string* error);

  HandleTable<Comm> comms{3};
  HandleTable<const Group> groups{2};
  HandleTable<const Datatype> types{RONDO_MPI_LAST_PREDEFINED_DATATYPE + 1};
  HandleTable<const Op> ops{32};
  // After `comms`: requests hold (borrowed) communicators, so they go
  // first.
  RequestTable requests;
  // What every kSentRequest handle names: a completed send, never written
  // after construction (so any thread may read it).
  const MpiRequest& sent_request() const noexcept { return sent_request_; }
  HandleTable<UserErrhandler> errhandlers{3};
  HandleTable<Info> infos{1};
  HandleTable<MpiSession> sessions{1};
  HandleTable<Win> wins{1};
  // User attribute keys (after the predefined MPI_TAG_UB ..
  // MPI_LASTUSEDCODE), and the lock of every Comm::attrs and of the keys'
  // use counts (attr.cc). Never held while a callback runs.
  static constexpr int kFirstUserKeyval = 16;
  HandleTable<Keyval> keyvals{kFirstUserKeyval};
  std::mutex attr_mu;

  // User datatypes that MPI_Type_commit committed.
  bool IsCommitted(MPI_Datatype h) const {
    std::lock_guard<queues::SpinLock> lock(committed_mu);
    return committed.count(h) != 0;
  }
  void SetCommitted(MPI_Datatype h, bool on) {
    std::lock_guard<queues::SpinLock> lock(committed_mu);
    if (on) committed.insert(h);
    else committed.erase(h);
  }

  // Requests freed by MPI_Request_free before completion: their slots in
  // `requests` (handles already invalid), recycled once done. The mutex
  // also guards names, infos and group_creations (not on the fast path).
  std::mutex detached_mu;
  std::vector<uint32_t> detached;

  // MPI_Buffer_attach's buffer and the buffered sends that occupy it (each
  // a copy of its message at `offset`, MPI_BSEND_OVERHEAD bytes reserved
  // in front, sent by a standard send from there), in offset order.
  struct BufferedSend {
    size_t offset = 0;
    size_t bytes = 0;  // overhead included
    std::unique_ptr<MpiRequest> req;
  };
  // Messages taken by MPI_Improbe/MPI_Mprobe, until their MPI_Mrecv: the
  // communicator they came on and the core's handle (nmad::Session).
  struct ProbedMessage {
    CommRef comm;
    Session::MatchedMessage msg;
  };
  std::mutex messages_mu;
  std::unordered_map<int, ProbedMessage> messages;
  int next_message = 1;

  std::mutex bsend_mu;
  uint8_t* bsend_buf = nullptr;
  size_t bsend_size = 0;
  bool bsend_attached = false;
  std::vector<BufferedSend> bsends;

  // MPI_COMM_WORLD and MPI_COMM_SELF, which live until MPI_Finalize: the
  // fast path reaches them without the table's lock or a reference count.
  Comm* PredefinedComm(MPI_Comm h) const noexcept {
    return h == MPI_COMM_WORLD || h == MPI_COMM_SELF ? predefined_comms_[h]
                                                     : nullptr;
  }

  // Collective algorithm overrides from RONDO_COLL_<NAME> and tuning.
  coll::Algorithm forced[coll::kNumCollectives] = {};
  uint64_t segment_bytes = 64 * 1024;
  int radix = 4;
  // RONDO_RMA_SHM: one-node MPI_Win_allocate(_shared) windows by
  // load/store in a shared segment (win.cc), else active messages.
  bool rma_shm = true;
  // RONDO_RMA_UCX: windows use UCX's one-sided operations for contiguous
  // puts and gets to the ranks it reaches, and integer atomics when it
  // reaches every rank (win.cc).
  bool rma_ucx = true;
  // RONDO_RMA_UCX=1: UCX's one-sided operations also where its transport
  // emulates them (tcp); auto leaves those ranks to active messages.
  bool rma_ucx_emulated = false;
  // One-sided operations abandoned to a failed target (win.cc): UCX may
  // still hold them (it completes them, if ever, when its worker closes),
  // so they live until the Core is gone.
  std::mutex rma_abandoned_mu;
  std::vector<std::shared_ptr<void>> rma_abandoned;
  // RONDO_COLL_SHM and RONDO_COLL_SHM_BYTES: small blocking barrier,
  // bcast, reduce and allreduce of one-node communicators through a shared
  // segment (coll_shm.cc), up to this many bytes.
  bool coll_shm = true;
  int64_t coll_shm_bytes = 16384;
  // Windows on the shared-memory path by handle % kFastWins, for win.cc's
  // fast path (FastWin): set at creation, cleared before the window is
  // destroyed; a window whose slot another took uses the full path.
  static constexpr int kFastWins = 16;
  std::atomic<Win*> fast_wins[kFastWins] = {};
  // RONDO_SPLIT_S (auto|<int>), for the split-tree collectives.
  coll::SplitOptions split_options;

  // MPI_Comm_create_group numbering, per (parent, tag, group).
  std::map<std::string, uint64_t> group_creations;

  // Values of the predefined attributes (MPI_Comm_get_attr points at them).
  int attr_tag_ub = kMaxTag;
  int attr_host = MPI_PROC_NULL;
  int attr_io = MPI_ANY_SOURCE;
  int attr_wtime_is_global = 0;
  int attr_universe_size = 1;
  int attr_appnum = 0;
  int attr_lastusedcode = MPI_ERR_LASTCODE;

  int thread_level = MPI_THREAD_MULTIPLE;
  std::thread::id main_thread;

 private:
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Core> core_;
  int world_size_ = 0;  // core_->size(), fixed once core_ is made
  mutable queues::SpinLock committed_mu;
  std::unordered_set<int> committed;
  Comm* predefined_comms_[3] = {};
  MpiRequest sent_request_;  // set up by the constructor
};

// A live window has handle `h` (win.cc).
bool WinExists(State& st, MPI_Win h);
// At the end of MPI: stops serving the windows the program did not free
// (with a warning) while the core still runs. Returns how many.
size_t ForgetWindows(State& st);

// The instance (null before MPI_Init and after MPI_Finalize).
State* Mpi();
bool Initialized();
bool Finalized();
// The instance's users (sessions.cc, state.cc): the World model (MPI_Init
// .. MPI_Finalize) and each live MPI_Session. The first user creates the
// instance, the last one to leave destroys it (collective, as
// MPI_Finalize). Once destroyed it is not created again: MPI_Init or
// MPI_Session_init after that gets MPI_ERR_OTHER. `required` is the thread
// level asked; returns the instance, or null with *error set.
State* AcquireState(bool world, int required, const char* fn,
                    std::string* error);
// Drops one user (the World model or a session); destroys the instance
// when it was the last. Returns MPI_SUCCESS.
int ReleaseState(bool world);
// Runs `h` (an error handler) for an error `code` on the object `handle`
// (a window or a session); as CallErrhandler does for communicators.
int CallErrhandlerOn(MPI_Errhandler h, int handle, int code, const char* fn);
// Records `message` as a new code of class `error_class`, as RaiseError,
// and runs the handler `h` on `handle`.
int RaiseErrorOn(MPI_Errhandler h, int handle, int error_class, const char* fn,
                 const std::string& message);

// ---- errors ----
// Records `message` for a new error code of class `error_class`, runs the
// error handler of `comm` (MPI_COMM_WORLD's when comm is null): with
// MPI_ERRORS_ARE_FATAL prints "MPI error in <fn>: <message>" and aborts the
// job; returns the code otherwise.
int RaiseError(const Comm* comm, int error_class, const char* fn,
               const std::string& message);
// Runs `comm`'s error handler on an existing error code.
int CallErrhandler(const Comm* comm, int code, const char* fn);
// The code's message, or the class's generic text; a user code's
// MPI_Add_error_string text ("" until set).
std::string ErrorText(int code);
int ErrorClassOf(int code);
// `code` is an error code MPI_Error_class knows: MPI_SUCCESS, a predefined
// class, a code Rondo raised, or one of MPI_Add_error_class/code.
bool IsErrorCode(int code);
// `code` is an error class other than MPI_SUCCESS: a predefined one or one
// of MPI_Add_error_class.
bool IsErrorClass(int code);
// MPI_Add_error_class (`of_class` < 0) and MPI_Add_error_code (of that
// class, which the caller checked): the new value, the largest so far.
int AddUserError(int of_class);
// MPI_Add_error_string: false when `code` is not a user class or code.
bool SetUserErrorText(int code, const std::string& text);

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_INTERNAL_STATE_H_
