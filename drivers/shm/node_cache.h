// NodeCache: keeps the nodes of a node-based standard map's erased entries
// for its next inserts, so that a map whose size stays bounded stops
// allocating once it has reached its peak (C++17 node handles: extract,
// then insert with a new key and value). The shared-memory driver's
// rendezvous tables took an allocation for every large message sent and
// received, on the message's path.
//
// Thread-safety: none (the map's own). The cache holds at most
// `max_spare` nodes; the others are freed as erase would.
#ifndef RONDO_DRIVERS_SHM_NODE_CACHE_H_
#define RONDO_DRIVERS_SHM_NODE_CACHE_H_

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace rondo::drivers::shm {

template <typename Map>
class NodeCache {
 public:
  using Node = typename Map::node_type;
  using Iterator = typename Map::iterator;

  explicit NodeCache(size_t max_spare = 64) : max_spare_(max_spare) {
    spare_.reserve(max_spare);  // pushes never allocate
  }

  // Inserts {key, value} (a new entry: for a map with unique keys, the key
  // must not be there). Allocates only when no node is kept; may throw
  // std::bad_alloc then, and nothing is inserted.
  template <typename Value>
  Iterator Insert(Map& map, const typename Map::key_type& key,
                  Value&& value) {
    if (spare_.empty())
      return Emplaced(map.emplace(key, std::forward<Value>(value)));
    Node node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = key;
    node.mapped() = std::forward<Value>(value);
    return Inserted(map.insert(std::move(node)));
  }

  // Erases the entry at `it` and returns the iterator after it.
  Iterator Erase(Map& map, Iterator it) {
    Iterator next = std::next(it);
    if (spare_.size() < max_spare_)
      spare_.push_back(map.extract(it));
    else
      map.erase(it);
    return next;
  }

  // Makes up to `n` nodes now (through `map`, which must be empty), so that
  // the first inserts after start-up allocate nothing either: a table's
  // peak can be reached late (an RTS arriving before its receive, on a
  // slow turn). May throw std::bad_alloc.
  void Prime(Map& map, size_t n) {
    while (spare_.size() < std::min(n, max_spare_))
      spare_.push_back(map.extract(
          Emplaced(map.emplace(typename Map::key_type{},
                               typename Map::mapped_type{}))));
  }

  size_t spare() const noexcept { return spare_.size(); }

 private:
  // emplace and insert(node) return an iterator (multimap) or a pair /
  // insert_return_type holding one (unique keys).
  static Iterator Emplaced(Iterator it) { return it; }
  static Iterator Emplaced(std::pair<Iterator, bool> r) { return r.first; }
  static Iterator Inserted(Iterator it) { return it; }
  template <typename R>
  static Iterator Inserted(R r) {
    return r.position;
  }

  size_t max_spare_;
  std::vector<Node> spare_;
};

}  // namespace rondo::drivers::shm

#endif  // RONDO_DRIVERS_SHM_NODE_CACHE_H_
