fn main() -> std::process::ExitCode {
    keep_freed_memory();
    hashmark::cli::run()
}

/// Every frame of a stream allocates the same large buffers (the frame balanced, its grey in
/// linear light, the table's orthographic view and its gradients, the obstacle search's
/// images: 2-8 MB each at 1080p) and frees them at the frame's end. glibc hands blocks
/// that large back to the system when freed (its mmap and trim thresholds), and the next
/// frame faults every page of them in afresh, zeroed by the kernel: on the fixed rendered
/// set a stream's full search took 35-36 ms so and 26-27 with the freed memory kept for
/// reuse (`bench detect --runs 3 --beside-searches 0`, two runs each). The process then
/// keeps its freed memory until it exits: `bench detect` on that set peaked at 247 MB
/// against 194.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    const MMAP_THRESHOLD: libc::c_int = 256 << 20;
    const TRIM_THRESHOLD: libc::c_int = 1 << 30;
    // SAFETY: mallopt only sets allocator parameters; it is called before any thread
    // exists, and a refused setting (return 0) leaves glibc's defaults, which work.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}
