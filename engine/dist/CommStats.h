#pragma once
// Where a data-parallel step's time goes: for ddp and zero1 as c10d's Logger measures it (the
// numbers Python DDP logs under TORCH_DISTRIBUTED_DEBUG), for zero2 Hearth's own clock around its
// collectives. Running means in milliseconds over the synchronised steps measured.

#include <cstdint>

namespace hearth::dist {

struct CommStats {
    int64_t steps = 0;                 // synchronised steps measured (0: nothing measured)
    double forward_ms = 0.0;           // forward compute (0 when not measured)
    double backward_compute_ms = 0.0;  // backward compute (0 when not measured)
    double comm_ms = 0.0;              // gradient communication, launch of the first to end of the last
    double overlap_ms = 0.0;           // the part of comm_ms hidden under backward compute
};

}  // namespace hearth::dist
