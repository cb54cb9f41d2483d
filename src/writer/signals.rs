//! Deferring SIGINT, SIGTERM and SIGHUP while a plan is applied.
//!
//! The signals are blocked (not handled): the kernel keeps them pending, and the apply looks at
//! what is pending between its steps, then rolls back (or, once every rename is done, finishes)
//! and reports `Interrupted`, which exits with 128 + the signal number. No handler runs, so there
//! is nothing async-signal-unsafe. SIGKILL cannot be deferred: the journal (`crate::writer::journal`)
//! covers it.

#[cfg(unix)]
const DEFERRED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Signals blocked for as long as this value lives (this thread; cellgen applies on one).
pub struct Deferred {
    #[cfg(unix)]
    previous: libc::sigset_t,
}

#[cfg(unix)]
fn deferred_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset only write the set they are given.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in DEFERRED {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

impl Deferred {
    #[cfg(unix)]
    pub fn start() -> Deferred {
        let set = deferred_set();
        // SAFETY: pthread_sigmask reads `set` and writes the previous mask into `previous`.
        unsafe {
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous);
            Deferred { previous }
        }
    }

    #[cfg(not(unix))]
    pub fn start() -> Deferred {
        Deferred {}
    }

    /// A deferred signal that has arrived, if any (it stays pending until `take`).
    #[cfg(unix)]
    pub fn pending(&self) -> Option<i32> {
        // SAFETY: sigpending writes the pending set; sigismember reads it.
        unsafe {
            let mut pending: libc::sigset_t = std::mem::zeroed();
            if libc::sigpending(&mut pending) != 0 {
                return None;
            }
            DEFERRED
                .into_iter()
                .find(|sig| libc::sigismember(&pending, *sig) == 1)
        }
    }

    #[cfg(not(unix))]
    pub fn pending(&self) -> Option<i32> {
        None
    }

    /// Consumes every pending deferred signal, so that unblocking does not deliver it: the
    /// caller reports the interruption itself. Returns the first one.
    #[cfg(unix)]
    pub fn take(&self) -> Option<i32> {
        let first = self.pending()?;
        while let Some(sig) = self.pending() {
            let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
            let mut got: libc::c_int = 0;
            // SAFETY: `sig` is pending and blocked, so sigwait returns at once with it.
            unsafe {
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::sigwait(&set, &mut got);
            }
        }
        Some(first)
    }

    #[cfg(not(unix))]
    pub fn take(&self) -> Option<i32> {
        None
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: restores the mask saved by `start`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut());
        }
    }
}
