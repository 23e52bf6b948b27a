/* emu_launch.h - TEST-ONLY: the emulator's side of LAUNCH() (kernels/runtime/launch.h).
 *
 * LAUNCH(k, grid, block, smem)(args...) converts the arguments to k's parameter types (as <<<>>> does), lists
 * the pointer arguments (the device memory the kernel can reach), and hands a closure to emu::launch, which
 * validates the configuration, runs the grid twice in two different orders and compares, and checks red
 * zones. A failure is recorded for cudaGetLastError(); the launch itself never aborts the process. */
#ifndef CUDA_EMU_LAUNCH_H
#define CUDA_EMU_LAUNCH_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace emu {

struct launch_cfg {
    dim3 grid, block;
    size_t smem;
    const char *name, *file;
    int line;
    const void *kernel; /* the kernel function: its cudaFuncSetAttribute opt-ins (emu_dry.cc) */
    int cooperative;    /* cudaLaunchCooperativeKernel: every block resident at once, grid.sync() allowed */
};

/* body(ctx) runs one thread: the scheduler sets threadIdx/blockIdx first. ptrs: the pointer arguments. */
void launch(const launch_cfg &cfg, void (*body)(void *), void *ctx, void *const *ptrs, int nptrs);
void *dynamic_smem(void);
/* Stream capture (emu_graph.cc): while capturing, a launch is recorded with its arguments copied, and run (with
 * every check above) when the graph is launched. */
int capturing(void);
void capture_record(const char *what, std::function<void()> run);

template <class... P> struct launcher {
    void (*kernel)(P...);
    launch_cfg cfg;
    struct closure {
        void (*kernel)(P...);
        std::tuple<typename std::decay<P>::type...> args;
    };
    static void run(void *ctx)
    {
        closure *c = (closure *)ctx;
        std::apply(c->kernel, c->args);
    }
    /* Not a template: the arguments convert to the kernel's parameter types as in a call (NULL included). */
    void operator()(P... a) const
    {
        closure c{kernel, std::tuple<typename std::decay<P>::type...>(a...)};
        if (capturing()) {
            launcher self = *this;
            capture_record(cfg.name, [self, c]() mutable { self.start(c); });
            return;
        }
        start(c);
    }
    void start(closure &c) const
    {
        void *ptrs[sizeof...(P) + 1];
        int n = 0;
        std::apply([&](const auto &...x) { ((add_ptr(ptrs, n, x)), ...); }, c.args);
        launch(cfg, &run, &c, ptrs, n);
    }
    template <class X> static void add_ptr(void **ptrs, int &n, const X &x)
    {
        if constexpr (std::is_pointer<X>::value) ptrs[n++] = (void *)x;
    }
};

/* LAUNCH_COOPERATIVE(k, grid, block, smem)(args...): cudaLaunchCooperativeKernel's contract, which returns the
 * launch's error instead of leaving it for cudaGetLastError (the kernel's own faults are still sticky there). */
template <class... P> struct coop_launcher {
    launcher<P...> l;
    cudaError_t operator()(P... a) const
    {
        if (capturing()) return cudaErrorStreamCaptureUnsupported;
        typename launcher<P...>::closure c{l.kernel, std::tuple<typename std::decay<P>::type...>(a...)};
        l.start(c);
        return cudaGetLastError();
    }
};

template <class... P>
inline coop_launcher<P...> make_coop_launcher(void (*k)(P...), const char *name, dim3 grid, dim3 block, size_t smem,
                                              const char *file, int line)
{
    return coop_launcher<P...>{
        launcher<P...>{k, launch_cfg{grid, block, smem, name, file, line, reinterpret_cast<const void *>(k), 1}}};
}

template <class... P>
inline launcher<P...> make_launcher(void (*k)(P...), const char *name, dim3 grid, dim3 block, size_t smem,
                                    const char *file, int line)
{
    return launcher<P...>{k, launch_cfg{grid, block, smem, name, file, line, reinterpret_cast<const void *>(k), 0}};
}

} /* namespace emu */

#endif
