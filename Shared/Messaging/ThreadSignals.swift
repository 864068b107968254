#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the calling thread refuse process-directed signals (SIGTERM, SIGINT, …),
/// as libzmq and libdispatch do for their own threads.
///
/// The kernel hands such a signal to any thread that does not block it; landing
/// on one of our socket threads it would take its default action and kill the
/// process, instead of reaching the handler that starts a graceful shutdown.
func blockProcessSignalsOnThisThread() {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGCHLD] {
        sigaddset(&set, signal)
    }
    pthread_sigmask(SIG_BLOCK, &set, nil)
}
