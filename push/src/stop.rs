//! An orderly stop. `agentpact push` stops on Ctrl-C or SIGTERM without dropping a database
//! statement half-way: a commit cut off in flight leaves its connection to roll back a transaction
//! that no longer exists, which Postgres answers with a warning. Each loop looks at the [`Stop`]
//! between passes and attempts; only a POST in flight is abandoned (its attempt was counted before
//! it was sent, so it goes again with the same key after a restart).

use tokio::sync::watch;

/// Asks every holder of the paired [`Stop`] to finish what it is doing and return.
#[derive(Debug)]
pub struct StopSignal(watch::Sender<bool>);

/// Whether a stop was asked for, as the loops read it.
#[derive(Debug, Clone)]
pub struct Stop(watch::Receiver<bool>);

/// A signal and the stop it sets.
pub fn channel() -> (StopSignal, Stop) {
    let (signal, stop) = watch::channel(false);
    (StopSignal(signal), Stop(stop))
}

impl StopSignal {
    /// Asks for the stop (again is harmless).
    pub fn request(&self) {
        self.0.send_replace(true);
    }
}

impl Stop {
    /// Whether the stop was asked for.
    pub fn is_requested(&self) -> bool {
        *self.0.borrow()
    }

    /// Completes once the stop is asked for (or its signal is gone).
    pub async fn requested(&self) {
        let mut stop = self.0.clone();
        let _ = stop.wait_for(|asked| *asked).await;
    }
}
