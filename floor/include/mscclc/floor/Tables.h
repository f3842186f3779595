//===- Tables.h - Collectives, data types and operators as C++ ----------===//
//
// The enums and descriptors made from the three X-macro tables
// (Collectives.def, DataTypes.def, RedOps.def), and the name look-ups every
// parser and printer uses. Plain C++17, no MLIR, CUDA or runtime code: the
// compiler, the dialect, the runtime and the NCCL library all include it.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FLOOR_TABLES_H
#define MSCCLC_FLOOR_TABLES_H

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace mscclc {

namespace floor_detail {
/// The id of the first row of `table` whose `field` equals `value` (names
/// compare as strings): every look-up below, by name or by enum value.
template <class Row, size_t N, class Field, class Value>
constexpr auto findRow(const Row (&table)[N], Field Row::*field, Value value)
    -> std::optional<decltype(Row::id)> {
  for (const Row &row : table) {
    bool match = false;
    if constexpr (std::is_same_v<Field, const char *>)
      match = std::string_view(row.*field) == value;
    else
      match = row.*field == value;
    if (match)
      return row.id;
  }
  return std::nullopt;
}
} // namespace floor_detail

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

enum class Collective : int {
#define MSCCLC_COLLECTIVE(Id, ...) Id,
#include "mscclc/floor/Collectives.def"
};

/// The buffer that only the root's matters for, in a rooted collective.
enum class Root { None, Input, Output };

/// A buffer's size in units of NCCL's count (or of a program's chunks).
enum class BufferSize { One, Ranks, Program };

/// Where the send and receive buffers of an in-place call lie.
enum class InPlace { Same, InputInOutput, OutputInInput, Never };

struct CollectiveInfo {
  Collective id;
  const char *name;     ///< "allreduce"
  const char *ncclName; ///< "AllReduce", as in ncclAllReduce
  Root root;
  bool reduces;
  BufferSize input, output;
  InPlace inPlace;
  int mscclc; ///< the mscclcCollective_t value, -1 if none
};

inline constexpr CollectiveInfo kCollectives[] = {
#define MSCCLC_COLLECTIVE(Id, name, Nccl, root, reduces, in, out, inPlace,     \
                          mscclc)                                              \
  {Collective::Id,  #name,          #Nccl,            Root::root,              \
   reduces != 0,    BufferSize::in, BufferSize::out,  InPlace::inPlace,        \
   mscclc},
#include "mscclc/floor/Collectives.def"
};

/// Every collective, `custom` included.
inline constexpr int kNumCollectives =
    int(sizeof(kCollectives) / sizeof(kCollectives[0]));

/// The collectives of NCCL and of the C API (mscclcCollective_t), which
/// come first: custom ones are the program's own.
inline constexpr int kNumStandardCollectives = [] {
#define MSCCLC_COLLECTIVE(...) 1 +
#define MSCCLC_PROGRAM_COLLECTIVE(...)
  return
#include "mscclc/floor/Collectives.def"
      0;
}();

constexpr const CollectiveInfo &collectiveInfo(Collective c) {
  return kCollectives[int(c)];
}
constexpr const char *collectiveName(Collective c) {
  return collectiveInfo(c).name;
}
/// Whether the collective takes a root.
constexpr bool collectiveRooted(Collective c) {
  return collectiveInfo(c).root != Root::None;
}
/// Only the root's input holds data (broadcast, scatter).
constexpr bool inputAtRootOnly(Collective c) {
  return collectiveInfo(c).root == Root::Input;
}
/// Only the root's output receives the result (reduce, gather): NCCL
/// ignores the other ranks' receive buffers (they may pass NULL).
constexpr bool resultAtRootOnly(Collective c) {
  return collectiveInfo(c).root == Root::Output;
}
/// Whether the collective applies the reduction operator.
constexpr bool collectiveReduces(Collective c) {
  return collectiveInfo(c).reduces;
}
/// Whether the collective is one of NCCL's and the C API's, with the
/// buffer sizes NCCL defines (not `custom`).
constexpr bool isStandardCollective(Collective c) {
  return int(c) < kNumStandardCollectives;
}
/// The collective of a name ("allreduce", ...; exact, `custom` included).
constexpr std::optional<Collective> lookupCollective(std::string_view name) {
  return floor_detail::findRow(kCollectives, &CollectiveInfo::name, name);
}

//===----------------------------------------------------------------------===//
// Data types
//===----------------------------------------------------------------------===//

enum class DataType : int {
#define MSCCLC_DATA_TYPE(Id, ...) Id,
#include "mscclc/floor/DataTypes.def"
};

struct DataTypeInfo {
  DataType id;
  const char *name;     ///< "f32"
  const char *ncclName; ///< "float32"
  size_t bytes;
  int nccl;   ///< the ncclDataType_t value
  int mscclc; ///< the mscclcDataType_t value
  bool multimem;
};

inline constexpr DataTypeInfo kDataTypes[] = {
#define MSCCLC_DATA_TYPE(Id, name, ncclName, bytes, nccl, mscclc, multimem)    \
  {DataType::Id, #name, ncclName, bytes, nccl, mscclc, multimem != 0},
#include "mscclc/floor/DataTypes.def"
};
inline constexpr int kNumDataTypes =
    int(sizeof(kDataTypes) / sizeof(kDataTypes[0]));

constexpr const DataTypeInfo &dataTypeInfo(DataType t) {
  return kDataTypes[int(t)];
}
constexpr const char *dataTypeName(DataType t) { return dataTypeInfo(t).name; }
constexpr size_t dataTypeSize(DataType t) { return dataTypeInfo(t).bytes; }
/// The type of a name ("f32", ...).
constexpr std::optional<DataType> lookupDataType(std::string_view name) {
  return floor_detail::findRow(kDataTypes, &DataTypeInfo::name, name);
}
/// The type of an mscclcDataType_t or ncclDataType_t value.
constexpr std::optional<DataType> dataTypeOfMscclc(int value) {
  return floor_detail::findRow(kDataTypes, &DataTypeInfo::mscclc, value);
}
constexpr std::optional<DataType> dataTypeOfNccl(int value) {
  return floor_detail::findRow(kDataTypes, &DataTypeInfo::nccl, value);
}

//===----------------------------------------------------------------------===//
// Reduction operators
//===----------------------------------------------------------------------===//

enum class RedOp : int {
#define MSCCLC_RED_OP(Id, ...) Id,
#include "mscclc/floor/RedOps.def"
};

struct RedOpInfo {
  RedOp id;
  const char *name; ///< "sum"
  int nccl;         ///< the ncclRedOp_t value, -1 for PreMulSum
  int mscclc;       ///< the mscclcRedOp_t value
  bool multimem;
};

inline constexpr RedOpInfo kRedOps[] = {
#define MSCCLC_RED_OP(Id, name, nccl, mscclc, multimem)                        \
  {RedOp::Id, name, nccl, mscclc, multimem != 0},
#include "mscclc/floor/RedOps.def"
};
inline constexpr int kNumRedOps = int(sizeof(kRedOps) / sizeof(kRedOps[0]));

constexpr const RedOpInfo &redOpInfo(RedOp op) { return kRedOps[int(op)]; }
constexpr const char *redOpName(RedOp op) { return redOpInfo(op).name; }
/// The operator of a name ("sum", ...).
constexpr std::optional<RedOp> lookupRedOp(std::string_view name) {
  return floor_detail::findRow(kRedOps, &RedOpInfo::name, name);
}
/// The operator of an mscclcRedOp_t or a built-in ncclRedOp_t value.
constexpr std::optional<RedOp> redOpOfMscclc(int value) {
  return floor_detail::findRow(kRedOps, &RedOpInfo::mscclc, value);
}
constexpr std::optional<RedOp> redOpOfNccl(int value) {
  // PreMulSum's row holds -1: no NCCL value names it.
  if (value < 0)
    return std::nullopt;
  return floor_detail::findRow(kRedOps, &RedOpInfo::nccl, value);
}

//===----------------------------------------------------------------------===//
// The tables' own invariants
//===----------------------------------------------------------------------===//

namespace floor_detail {
constexpr bool collectivesInOrder() {
  for (int i = 0; i < kNumCollectives; ++i)
    if (int(kCollectives[i].id) != i ||
        (i < kNumStandardCollectives) != (kCollectives[i].mscclc == i) ||
        (i >= kNumStandardCollectives && kCollectives[i].mscclc != -1))
      return false;
  return true;
}
constexpr bool dataTypesInOrder() {
  for (int i = 0; i < kNumDataTypes; ++i)
    if (int(kDataTypes[i].id) != i || kDataTypes[i].mscclc != i)
      return false;
  return true;
}
constexpr bool redOpsInOrder() {
  for (int i = 0; i < kNumRedOps; ++i)
    if (int(kRedOps[i].id) != i || kRedOps[i].mscclc != i)
      return false;
  return true;
}
} // namespace floor_detail

static_assert(floor_detail::collectivesInOrder(),
              "Collectives.def: rows in mscclcCollective_t order, the "
              "standard ones (mscclc >= 0) first");
static_assert(floor_detail::dataTypesInOrder(),
              "DataTypes.def: rows in mscclcDataType_t order");
static_assert(floor_detail::redOpsInOrder(),
              "RedOps.def: rows in mscclcRedOp_t order");

} // namespace mscclc

#endif // MSCCLC_FLOOR_TABLES_H
