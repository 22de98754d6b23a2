//! What the `agentpact` binary shares with the test harness: starting the local parts of a
//! development stack (the pinned anvil, a private PostgreSQL cluster).

pub mod local;
