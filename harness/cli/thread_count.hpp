// The one default thread count of every command: all cores this process may run on.
#pragma once

namespace lobench {

// CPUs in this process's affinity mask (what a container or taskset allows), at least 1.
int default_thread_count();

}  // namespace lobench
