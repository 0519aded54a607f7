#include "drivers/shm/node_segment.h"

#include <sys/random.h>
#include <unistd.h>

#include <cstdio>

namespace rondo::drivers::shm {
namespace {

std::string RandomName(int rank) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != sizeof r)
    r = static_cast<uint64_t>(getpid()) * 0x9e3779b97f4a7c15ull ^
        reinterpret_cast<uintptr_t>(&r);
  char buf[64];
  std::snprintf(buf, sizeof buf, "rondo-shm-%016llx-%d",
                static_cast<unsigned long long>(r), rank);
  return buf;
}

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

Result<NodeSegment> SetupNodeSegment(bootstrap::Bootstrap& boot,
                                     std::string_view node_key,
                                     uint32_t ring_cells, std::string* error) {
  auto broken = [error](const char* step, Status s) {
    if (error)
      *error = std::string("shm: bootstrap ") + step + " failed: " +
               std::string(engine::StatusName(s));
    return s;
  };
  if (Status s = boot.Put("shm.node", Bytes(node_key)); s != Status::kOk)
    return broken("Put", s);
  if (Status s = boot.Fence(); s != Status::kOk) return broken("Fence", s);
  NodeSegment node;
  for (int r = 0; r < boot.size(); ++r) {
    auto key = boot.Get(r, "shm.node");
    if (key.ok() && std::string_view(reinterpret_cast<const char*>(
                                         key.value().data()),
                                     key.value().size()) == node_key) {
      if (r == boot.rank()) node.local = static_cast<int>(node.ranks.size());
      node.ranks.push_back(r);
    }
  }
  const bool leader = !node.ranks.empty() && node.ranks[0] == boot.rank();
  const int n = static_cast<int>(node.ranks.size());
  std::shared_ptr<ShmSegment> seg;
  if (leader && n > 1) {
    std::string published, why;
    for (int attempt = 0; attempt < 4 && seg == nullptr; ++attempt) {
      auto created = ShmSegment::Create(RandomName(boot.rank()), n, ring_cells,
                                        &why);
      if (created.ok()) seg = created.value();
      else if (created.status() != Status::kBusy) break;
    }
    published = seg ? seg->name() : "!" + why;
    if (Status s = boot.Put("shm.seg", Bytes(published)); s != Status::kOk)
      return broken("Put", s);
    if (seg == nullptr) node.why_none = why;
  }
  if (Status s = boot.Fence(); s != Status::kOk) return broken("Fence", s);
  if (!leader && n > 1) {
    auto name = boot.Get(node.ranks[0], "shm.seg");
    std::string text = name.ok() ? std::string(name.value().begin(),
                                               name.value().end())
                                 : "!no segment name from rank " +
                                       std::to_string(node.ranks[0]);
    if (!text.empty() && text[0] == '!') {
      node.why_none = text.substr(1);
    } else {
      std::string why;
      auto opened = ShmSegment::Open(text, &why);
      if (opened.ok() && opened.value()->local_size() == n)
        seg = opened.value();
      else
        node.why_none = opened.ok() ? "segment " + text + " has the wrong size"
                                    : why;
    }
  }
  // Collective over the job, whatever this node's size.
  if (Status s = boot.Barrier(); s != Status::kOk) return broken("Barrier", s);
  if (leader && seg) (void)seg->Unlink();
  if (n <= 1) node.why_none = "no other rank on this node";
  node.segment = std::move(seg);
  return node;
}

}  // namespace rondo::drivers::shm
