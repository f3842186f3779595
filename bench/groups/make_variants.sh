#!/usr/bin/env bash
# Writes the two ways of splitting a thread-block group's operations into
# DIR as reference kernels for mscclc-bench (NAME.cu + NAME.plan.json):
#   stripes: what mscclc generates, every operation split by position in
#            the chunk, the same in every operation (Layout.h stripes);
#   perop:   the same kernels with each operation split by its own element
#            count into G contiguous slices (cut at 16 bytes), the split
#            mscclc used before, which the proof cannot follow when two
#            operations move different counts.
#   bench/groups/make_variants.sh MSCCLC DIR [RANKS] [G]
set -euo pipefail
mscclc=$1 dir=$2 ranks=${3:-2} g=${4:-8}
src="$(dirname "$0")/allreduce_groups.mscl"
mkdir -p "$dir"
"$mscclc" "$src" --ranks "$ranks" -D G="$g" --emit=cuda -o "$dir/stripes.cu"
"$mscclc" "$src" --ranks "$ranks" -D G="$g" --emit=plan -o "$dir/stripes.plan.json"
cp "$dir/stripes.plan.json" "$dir/perop.plan.json"
# The old split as a helper, and every stripe loop replaced by one pass
# over that slice.
{
  sed -n '1,/^using namespace mscclc::dev;/p' "$dir/stripes.cu"
  cat <<'HELPER'
// The per-operation split: slice `index` of `parts` of the operation's own
// range, ceil(n / parts) rounded up to 16 bytes, the last slices shorter.
__device__ __forceinline__ Range perOpSlice(Range r, u32 index, u32 parts) {
  const u64 n = r.size(), align = 16 / sizeof(T);
  const u64 per = ((n + parts - 1) / parts + align - 1) / align * align;
  const u64 b = umin(n, per * index), e = umin(n, b + per);
  return Range{r.begin + b, r.begin + e};
}
HELPER
  sed -e '1,/^using namespace mscclc::dev;/d' \
      -e 's/for (Range r = groupFirst(whole, g, \([0-9]*\), gs); !r.done(); r = groupNext(whole, r, [0-9]*, gs))/for (Range r = perOpSlice(whole, g, \1), *once = \&r; once; once = nullptr)/' \
      -e 's/const u64 gs = mscclc_group_stripe(.*/\/\/ (no stripes: each operation is split on its own)/' \
      "$dir/stripes.cu"
} > "$dir/perop.cu"
grep -c perOpSlice "$dir/perop.cu" > /dev/null
