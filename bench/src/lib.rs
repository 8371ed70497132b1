//! The harness kit the benchmark (`opencode-pty-bench`) shares with the hardening runs
//! (`opencode-pty-hardening`): a real daemon started, claimed, reached through its socket, measured from
//! `/proc` and stopped (`daemon`), and what the system tells of processes and the machine (`system`).

pub mod daemon;
pub mod system;
