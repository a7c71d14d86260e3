enum DiskTierPlaceholder {}
