/* emu_ptx.cc - TEST-ONLY: the preconditions of ldmatrix (include/mma_ptx.h), checked once every lane of the
 * warp has arrived and before any row is read. What the PTX ISA says ("Warp-level matrix load instruction:
 * ldmatrix"): with .shared, the address operand is in the shared state space (a generic address outside it is
 * undefined); each row of a matrix is 16 contiguous bytes, its address aligned to 16 bytes; lanes 0-7 (.x1),
 * 0-15 (.x2) or 0-31 (.x4) supply the rows' addresses; the others' are not used, so not checked. */
#include "emu_eyes.h"
#include "emu_sched.h"
#include "include/emu_ptx.h"

namespace emu {

int ldmatrix_check(warp_collective *const lanes[32], const char *file, int line, size_t warp)
{
    int num = ((const ptx_lane *)lanes[0])->num;
    for (int l = 0; l < 8 * num; l++) {
        uintptr_t p = (uintptr_t)((const ptx_lane *)lanes[l])->row;
        if (!eyes_shared_span(p, 16)) {
            block_fail(cudaErrorIllegalAddress,
                       "%s at %s:%d: warp %zu lane %d's row address %p is not in the "
                       "block's shared memory (ldmatrix .shared reads shared memory only)",
                       lanes[0]->name, file, line, warp, l, (const void *)p);
            return -1;
        }
        if (p % 16) {
            block_fail(cudaErrorMisalignedAddress,
                       "%s at %s:%d: warp %zu lane %d's row address %p is not 16-byte "
                       "aligned (each row is 16 bytes, naturally aligned)",
                       lanes[0]->name, file, line, warp, l, (const void *)p);
            return -1;
        }
    }
    return 0;
}

} /* namespace emu */
