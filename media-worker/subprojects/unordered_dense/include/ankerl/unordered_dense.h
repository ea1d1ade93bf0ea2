// The names the mediasoup worker uses from martinus/unordered_dense (not packaged by Debian),
// as aliases of the standard containers. They differ only in speed and iteration order, which
// the worker does not rely on.
#ifndef SVC_ANKERL_UNORDERED_DENSE_H
#define SVC_ANKERL_UNORDERED_DENSE_H

#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace ankerl::unordered_dense {

template <class Key>
using hash = std::hash<Key>;

template <class Key, class T, class Hash = std::hash<Key>, class KeyEqual = std::equal_to<Key>>
using map = std::unordered_map<Key, T, Hash, KeyEqual>;

template <class Key, class Hash = std::hash<Key>, class KeyEqual = std::equal_to<Key>>
using set = std::unordered_set<Key, Hash, KeyEqual>;

} // namespace ankerl::unordered_dense

#endif
