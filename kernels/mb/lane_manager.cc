#include "kernels/mb/lane_manager.h"

namespace aesmux::kernels::mb {

const MbTier *BestMbTier(CpuFeatures available) {
  for (const MbTier &tier : kMbTiers) {
    if (Supported(tier, available)) return &tier;
  }
  return nullptr;
}

const MbTier *MbTierByName(std::string_view name) {
  for (const MbTier &tier : kMbTiers) {
    if (tier.name == name) return &tier;
  }
  return nullptr;
}

}  // namespace aesmux::kernels::mb
