//! What a stopped `hindsight` leaves behind: nothing it started, nothing half written
//! (issue #32, D).
//!
//! External guards run in process groups of their own, so the terminal's Ctrl-C never
//! reaches them, and a guard's child may leave even that group (`setsid`). So SIGINT and
//! SIGTERM are taken by one thread: it kills every guard's process group, then every
//! process still descended from `hindsight` (on Linux it is a child subreaper, so an
//! orphan of a killed guard is re-parented to it rather than to init and is found), removes
//! every staged output file (`.partial-PID.NAME`), and exits 130 or 143, as a shell
//! reports a command killed by those signals. The same thread reaps the orphans it adopts
//! as they exit (SIGCHLD), so a long replay gathers no zombies; the guards it started are
//! never reaped there, since their exit status is read where they were started.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set once a signal was taken: the command's own ending (an external guard gone, say)
/// must not exit first, with its own status and message.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Process groups of the running external guards.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Staged output files not yet put in place.
static STAGED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Takes SIGINT and SIGTERM from here on. Called first thing, before any other thread is
/// started: the signals are blocked in this thread, every thread started later inherits
/// that, and one thread waits for them. Children start with no signal blocked (the
/// standard library clears the mask when it spawns).
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

/// Starts a guard's `command` (which leads a process group of its own) and notes the
/// group, to kill if stopped. The note is taken under the same lock as the reaping of
/// orphans ([`ended_group`]), so a guard that exits at once is never taken for one.
pub fn spawn_group(command: &mut std::process::Command) -> std::io::Result<std::process::Child> {
    let mut groups = lock(&GROUPS);
    let child = command.spawn()?;
    if let Ok(pgid) = i32::try_from(child.id()) {
        groups.insert(pgid);
    }
    Ok(child)
}

/// The group has been killed and reaped.
pub fn ended_group(pgid: u32) {
    if let Ok(pgid) = i32::try_from(pgid) {
        lock(&GROUPS).remove(&pgid);
    }
}

/// A staged output file, to remove if stopped before it is put in place.
pub fn staged(path: PathBuf) {
    lock(&STAGED).insert(path);
}

/// The staged file was put in place or removed.
pub fn unstaged(path: &std::path::Path) {
    lock(&STAGED).remove(path);
}

/// The registry even if a thread panicked while holding it: what it lists stays valid.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits for the signal's exit when one was taken: called before the command's result is
/// reported, so a guard killed by the clean-up is not reported as a failed guard.
pub fn wait_if_stopping() {
    while STOPPING.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

/// Kills what was started and removes what was staged; the exit status follows.
fn clean_up() {
    STOPPING.store(true, Ordering::SeqCst);
    let groups: Vec<i32> = lock(&GROUPS).iter().copied().collect();
    #[cfg(unix)]
    for pgid in groups {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is shared.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    #[cfg(target_os = "linux")]
    linux::kill_descendants();
    for path in lock(&STAGED).iter() {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(unix)]
mod unix {
    use std::mem::MaybeUninit;

    fn signals() -> libc::sigset_t {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set it is given; sigaddset adds to it.
        unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            libc::sigaddset(set.as_mut_ptr(), libc::SIGINT);
            libc::sigaddset(set.as_mut_ptr(), libc::SIGTERM);
            // A child's exit: an adopted orphan to reap (blocking it changes nothing for
            // the guards hindsight waits for itself).
            #[cfg(target_os = "linux")]
            libc::sigaddset(set.as_mut_ptr(), libc::SIGCHLD);
            set.assume_init()
        }
    }

    pub fn install() {
        #[cfg(target_os = "linux")]
        super::linux::become_subreaper();
        let set = signals();
        // SAFETY: blocks the two signals in this thread; `set` is initialised.
        let blocked = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if blocked != 0 {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || wait(set));
        if waiter.is_err() {
            // With no thread to take them, the signals act as they would have.
            // SAFETY: as above.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        }
    }

    fn wait(set: libc::sigset_t) {
        let mut signal = 0;
        loop {
            // SAFETY: sigwait reads the set and writes the signal taken; both are ours.
            if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                continue;
            }
            #[cfg(target_os = "linux")]
            if signal == libc::SIGCHLD {
                super::linux::reap_orphans(&super::lock(&super::GROUPS));
                continue;
            }
            super::clean_up();
            std::process::exit(128 + signal);
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    pub fn become_subreaper() {
        // SAFETY: PR_SET_CHILD_SUBREAPER takes no pointers; if it fails nothing changes.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    }

    /// Kills every live process descended from this one, until none is left: a process
    /// whose parent was just killed is re-parented to this one (the subreaper) a moment
    /// later, so the tree is read again until it is empty, for at most half a second.
    pub fn kill_descendants() {
        let me = std::process::id() as i32;
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            let living = descendants(me);
            if living.is_empty() || Instant::now() >= deadline {
                return;
            }
            for pid in living {
                // SAFETY: kill(2) on a pid; no memory is shared.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Reaps this process's exited children that are not in `started` (the guards it
    /// started and waits for itself): orphans it adopted as the subreaper.
    pub fn reap_orphans(started: &std::collections::BTreeSet<i32>) {
        let me = std::process::id() as i32;
        for (pid, zombie) in children_of(me) {
            if zombie && !started.contains(&pid) {
                let mut status = 0;
                // SAFETY: waitpid on one exited child, not blocking; writes only `status`.
                unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            }
        }
    }

    /// The direct children of `parent` and whether each is a zombie, from `/proc`.
    fn children_of(parent: i32) -> Vec<(i32, bool)> {
        processes()
            .into_iter()
            .filter(|(_, (p, _))| *p == parent)
            .map(|(pid, (_, zombie))| (pid, zombie))
            .collect()
    }

    /// Every process's parent and whether it is a zombie, by pid.
    fn processes() -> Vec<(i32, (i32, bool))> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .filter_map(|pid| Some((pid, stat(pid)?)))
            .collect()
    }

    /// The live (not zombie) processes under `root`, from `/proc`.
    fn descendants(root: i32) -> Vec<i32> {
        let mut children: BTreeMap<i32, Vec<(i32, bool)>> = BTreeMap::new();
        for (pid, (parent, zombie)) in processes() {
            children.entry(parent).or_default().push((pid, zombie));
        }
        let mut living = Vec::new();
        let mut todo = vec![root];
        while let Some(pid) = todo.pop() {
            for &(child, zombie) in children.get(&pid).map_or(&[][..], Vec::as_slice) {
                if !zombie {
                    living.push(child);
                }
                todo.push(child);
            }
        }
        living
    }

    /// A process's parent and whether it is a zombie, from `/proc/PID/stat`, whose second
    /// field (the command, in parentheses) may hold anything, so it is read from the last
    /// `)`.
    fn stat(pid: i32) -> Option<(i32, bool)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &text[text.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let parent = fields.next()?.parse().ok()?;
        Some((parent, state == "Z"))
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn reads_its_own_parent_from_proc() {
            let me = std::process::id() as i32;
            let (parent, zombie) = super::stat(me).expect("own stat");
            assert!(!zombie);
            assert_eq!(parent, std::os::unix::process::parent_id() as i32);
        }
    }
}
