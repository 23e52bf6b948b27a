/* emu_eyes.h - TEST-ONLY: what the emulator sees of every load and store a kernel makes, and the detectors fed
 * by it (the "eyes": racecheck, inter-block hazards, initcheck, the memory-efficiency profile).
 *
 * The .cu objects of the emulation build are compiled with GCC's ThreadSanitizer instrumentation
 * (emu.mk): every load and store calls __tsan_readN/__tsan_writeN with its address. emu_access.cc defines
 * those entry points instead of libtsan, drops every address outside device allocations and the running
 * launch's shared memory, and hands the rest to emu_hazard.cc (races, uninitialised reads) and emu_profile.cc
 * (sectors and bank wavefronts). Only the first pass of a launch is watched: the second replays it in another
 * order for the byte comparison. Under ASan (SANITIZE=1) the instrumentation is off and the eyes see nothing. */
#ifndef CUDA_EMU_EYES_H
#define CUDA_EMU_EYES_H

#include "emu_internal.h"
#include "include/emu_launch.h"

#include <stddef.h>
#include <stdint.h>

namespace emu {

enum access_kind { ACC_READ, ACC_WRITE, ACC_ATOMIC };
/* SM_TEMPLATE: the __shared__ variables of template kernels, which g++ keeps out of the section emu_shared (a
 * function template's static is a COMDAT object in its own .bss section: the section attribute is dropped) */
enum smem_region { SM_STATIC, SM_DYNAMIC, SM_TEMPLATE, SM_REGIONS };

/* One access of one thread, as a hook saw it. pc: the return address into the instrumented code. */
struct access {
    uintptr_t addr;
    unsigned size;
    int kind;      /* access_kind */
    void *pc;
    unsigned tid;  /* linear thread index in the block */
};

/* The launch being watched: set at the start of each pass (emu_sched.cc's set_launch). */
struct watch_state {
    const launch_cfg *cfg;
    int on;                 /* pass 0 of a launch, and the instrumentation present */
    int profile;            /* on, and EMU_PROFILE=1 (or emu_profile_enable) */
    int detect;             /* on, and the detectors wanted (EMU_WATCH is not 0) */
    int model;              /* on, and the time model wanted (EMU_GPU_MODEL, emu_model.cc) */
    uint32_t launch_serial; /* stamps global shadow cells: a cell from an older launch is empty */
    uint32_t block_serial;  /* stamps "written in this block" for shared memory */
    uint32_t phase;         /* bumped at every block start and barrier: accesses of one phase are unordered */
    uint32_t block_linear;
};
extern watch_state W;

/* --- scheduler events (emu_sched.cc, emu_warp.cc) --- */
void eyes_pass(const launch_cfg &cfg, int pass);
/* The grid is done: the eyes close, so the host code that follows (also compiled from .cu files, so also
 * instrumented) runs unwatched. Without it an EMU_ONE_PASS=1 run kept them open after its only pass. */
void eyes_grid_end(void);
void eyes_block_begin(size_t nthreads);
void eyes_dynamic_smem(void *p, size_t bytes);
void eyes_block_end(void);
void eyes_barrier(void);
void eyes_warp_sync(size_t warp);
/* A cooperative launch (emu_launch.cc): each resident block's shared-memory shadow kept while it waits at a
 * grid.sync, and the grid.sync itself, after which every access is ordered against every access before it. */
void eyes_coop_begin(size_t nblocks);
void eyes_block_park(size_t slot);
void eyes_block_resume(size_t slot, void *dynamic_smem, size_t bytes);
void eyes_grid_sync(void);

/* --- cp.async (emu_async.cc) --- */
int eyes_shared_span(uintptr_t p, size_t bytes); /* [p, p + bytes) lies in the running block's shared memory */
/* the address in the running block's shared memory whose low 18 bits are off (a wgmma descriptor's window
 * address, include/emu_hopper.h), or 0 */
uintptr_t eyes_shared_from_window(uint32_t off);
/* --- the Hopper layer (emu_hopper.cc): set at start-up in a program with a .cu that includes
 * <hopper_ptx.h>, whose shared-memory writes (the generic proxy's) are then reported to it --- */
extern int hopper_linked;
void hopper_shared_write(uintptr_t p, unsigned n, unsigned tid, void *pc);
/* issued: the source read and the destination written by the calling thread, the destination unwritten until
 * it lands (initcheck); landed: the destination written by thread tid (the issuer) */
void eyes_async_issue(uintptr_t dst, uintptr_t src, unsigned bytes, unsigned src_bytes, void *pc);
void eyes_async_land(uintptr_t dst, unsigned bytes, void *pc, unsigned tid);
void hazard_shared_unwritten(int region, size_t off, size_t bytes);

/* --- device memory events (emu_runtime.cc, cublas_shim.cc) --- */
void eyes_alloc(alloc_info &a); /* every byte uninitialised */
void eyes_free(alloc_info &a);
void eyes_host_wrote(const void *p, size_t bytes); /* cudaMemcpy, cudaMemset, cuBLAS output: initialised */
void set_initialised(const void *p, size_t bytes, int on);

/* --- the detectors (emu_hazard.cc, emu_profile.cc), fed by emu_access.cc --- */
void hazard_new_launch(void); /* one report per launch */
void hazard_global(const access &a, const alloc_info *al);
void hazard_shared(const access &a, int region, size_t off, size_t region_bytes);
void profile_access(const access &a, int shared);
int profile_on(void);
void profile_new_launch(const launch_cfg &cfg);
void profile_block_end(void);

/* --- naming things in messages (emu_symbols.cc) --- */
/* "kernels/maxsim_v1.cu:123" for a return address (resolved by addr2line, cached); "?" if unknown. */
const char *source_line(void *pc);
/* a stand-in pc for a call site known by file and line (a warp-collective operation's), named by source_line */
void *site_pc(const char *file, int line);
/* Between begin and end, a warp-collective operation of the warp whose lane 0 is first_tid runs: its accesses
 * are the lane collective_lane names and are at the operation's call site (pc, from site_pc). */
void eyes_collective_begin(unsigned first_tid, void *pc);
void eyes_collective_end(void);
/* "tile+12" (a static __shared__ variable and the offset in it), or "" if no symbol covers the address. */
void static_symbol(uintptr_t addr, char *out, size_t cap);
/* "(x,y,z)" of linear thread index t in the running block */
void thread_name(unsigned t, char *out, size_t cap);
/* The label and allocation site of a device allocation ("W (dev_alloc)", or "cudaMalloc at f.cu:12"). */
void alloc_name(const alloc_info *al, char *out, size_t cap);

/* Static __shared__ storage: the shim places every __shared__ variable in the section emu_shared. */
void static_smem_range(uintptr_t *lo, uintptr_t *hi);
/* The span of the static variables of every function template in the global namespace (nm: local statics
 * "_ZZ<digit>..." of type u or V), the template kernels' __shared__ storage (emu_symbols.cc; a kernel template
 * inside a namespace is not covered, nor are the shims' own statics, e.g. mma.h's emu::frag_perm); lo == hi when
 * none. */
void template_smem_range(uintptr_t *lo, uintptr_t *hi);
int template_smem_contains(uintptr_t p); /* inside one of them (the span also holds other variables) */

} /* namespace emu */

#endif
