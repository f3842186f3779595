//===- MsclAttrs.td - Enums and attributes of the mscl dialect -*- tablegen -*-===//

#ifndef MSCL_ATTRS_TD
#define MSCL_ATTRS_TD

include "mscl/IR/MsclBase.td"

// The collectives of mscclc/floor/Collectives.def, one case per row with the
// row's name and value (tblgen cannot read the C table: MsclDialect.cpp
// checks the two agree with static_asserts).
def Mscl_CollectiveKind : I32EnumAttr<"CollectiveKind", "collective", [
    I32EnumAttrCase<"allreduce", 0>, I32EnumAttrCase<"allgather", 1>,
    I32EnumAttrCase<"reducescatter", 2>, I32EnumAttrCase<"broadcast", 3>,
    I32EnumAttrCase<"reduce", 4>, I32EnumAttrCase<"alltoall", 5>,
    I32EnumAttrCase<"gather", 6>, I32EnumAttrCase<"scatter", 7>,
    I32EnumAttrCase<"custom", 8>]> {
  let cppNamespace = "::mscl";
  let genSpecializedAttr = 0;
}
def Mscl_CollectiveKindAttr
    : EnumAttr<Mscl_Dialect, Mscl_CollectiveKind, "collective"> {
  let assemblyFormat = "`<` $value `>`";
}

def Mscl_BufferKindAttr : I32EnumAttr<"BufferKind", "buffer kind", [
    I32EnumAttrCase<"input", 0>, I32EnumAttrCase<"output", 1>,
    I32EnumAttrCase<"scratch", 2>]> {
  let cppNamespace = "::mscl";
  let genSpecializedAttr = 1;
}

def Mscl_ChannelKindAttr : I32EnumAttr<"ChannelKind", "channel kind", [
    I32EnumAttrCase<"memory", 0>, I32EnumAttrCase<"port", 1>]> {
  let cppNamespace = "::mscl";
  let genSpecializedAttr = 1;
}

def Mscl_ProtocolAttr : I32EnumAttr<"Protocol", "memory channel protocol", [
    I32EnumAttrCase<"LL", 0>, I32EnumAttrCase<"HB", 1>]> {
  let cppNamespace = "::mscl";
  let genSpecializedAttr = 1;
}

def Mscl_ChunkAttr : AttrDef<Mscl_Dialect, "Chunk"> {
  let mnemonic = "chunk";
  let summary = "A contiguous run of chunks of one buffer on one rank";
  let description = [{
    `count` chunks of `buffer` starting at chunk `index`, on rank `rank`.
    The buffer is named by its `mscl.buffer` symbol (`input`, `output` or a
    scratch buffer). Printed as `<rank R, NAME[I]>` for one chunk and
    `<rank R, NAME[I:E]>` for chunks I .. E-1.

    Example: `#mscl.chunk<rank 3, scratch0[4:6]>` is chunks 4 and 5 of
    `scratch0` on rank 3.
  }];
  let parameters = (ins StringRefParameter<"buffer name">:$buffer,
                        "int64_t":$rank, "int64_t":$index, "int64_t":$count);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// One past the last chunk.
    int64_t getEnd() const { return getIndex() + getCount(); }
    /// Whether the two runs share at least one chunk of the same buffer.
    bool overlaps(ChunkAttr other) const;
    /// Whether `other` lies entirely inside this run.
    bool contains(ChunkAttr other) const;
  }];
}

#endif // MSCL_ATTRS_TD
