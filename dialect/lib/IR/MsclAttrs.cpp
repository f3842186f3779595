//===- MsclAttrs.cpp - The chunk attribute: syntax and overlap -----------===//

#include "mscl/IR/MsclDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mscl;

#define GET_ATTRDEF_CLASSES
#include "mscl/IR/MsclAttrs.cpp.inc"

/// Syntax: `<rank R, NAME[I]>` or `<rank R, NAME[I:E]>` with E exclusive.
Attribute ChunkAttr::parse(AsmParser &parser, Type) {
  int64_t rank = 0, index = 0, end = 0;
  std::string buffer;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword("rank") ||
      parser.parseInteger(rank) || parser.parseComma() ||
      parser.parseKeywordOrString(&buffer) || parser.parseLSquare() ||
      parser.parseInteger(index))
    return {};
  end = index + 1;
  if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(end))
    return {};
  if (parser.parseRSquare() || parser.parseGreater())
    return {};
  return parser.getChecked<ChunkAttr>(loc, parser.getContext(), buffer, rank,
                                      index, end - index);
}

void ChunkAttr::print(AsmPrinter &printer) const {
  printer << "<rank " << getRank() << ", ";
  printer.printKeywordOrString(getBuffer());
  printer << "[" << getIndex();
  if (getCount() != 1)
    printer << ":" << getEnd();
  printer << "]>";
}

LogicalResult ChunkAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef buffer, int64_t rank, int64_t index,
                                int64_t count) {
  if (buffer.empty())
    return emitError() << "chunk needs a buffer name";
  if (rank < 0)
    return emitError() << "chunk rank must be non-negative, got " << rank;
  if (index < 0)
    return emitError() << "chunk index must be non-negative, got " << index;
  if (count < 1)
    return emitError() << "chunk range must hold at least one chunk";
  return success();
}

bool ChunkAttr::overlaps(ChunkAttr other) const {
  return getBuffer() == other.getBuffer() && getRank() == other.getRank() &&
         getIndex() < other.getEnd() && other.getIndex() < getEnd();
}

bool ChunkAttr::contains(ChunkAttr other) const {
  return getBuffer() == other.getBuffer() && getRank() == other.getRank() &&
         getIndex() <= other.getIndex() && other.getEnd() <= getEnd();
}

void MsclDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mscl/IR/MsclAttrs.cpp.inc"
      >();
}
