//! The integration suite, one test binary: each module is what was once its own `tests/*.rs`
//! (the arbiter's articles, the emulator, the pseudo-terminals, the relay, the units, ...).
//! One binary links once instead of thirty-six times, and its tests share one pool of test
//! threads, so the many that wait on emulated boards playing in real time wait side by side.
//! Run one module with `cargo test --release --test suite MODULE::`. `tests/full_disk.rs` stays
//! a binary of its own: it installs a process-wide log subscriber.

mod alerts;
mod arbiter_articles;
mod arbiter_cli;
mod arbiter_decisions;
mod arbiter_final;
mod arbiter_rules;
mod arbiter_undo;
mod bad_input;
mod broadcast_delay;
mod browser;
mod bus_mode;
mod chess960;
mod cluster;
mod cluster_common;
mod cluster_republish;
mod config_cli;
mod console;
mod console_actions;
mod console_browser;
mod console_forfeits;
mod corpus_common;
mod corpus_emulated;
mod demo_togyz;
mod ee_tokens;
mod emulator;
mod emulator_irregularities;
mod event_browser;
mod event_rounds;
mod fleet;
mod fleet_common;
mod flood;
mod forged_requests;
mod gap_recovery;
mod hall_faults;
mod http_gate;
mod http_hardening;
mod http_relay;
mod import_memory;
mod journal_priorities;
mod lichess_push;
mod lichess_rounds;
mod live_page;
mod nats_security;
mod page_languages;
mod pairing_files;
mod pdf_scripts;
mod protocol_vectors;
mod pty_end_to_end;
mod real_captures;
mod record_command;
mod relay_common;
mod restart_trials;
mod run_config;
mod scoresheet;
mod sheet_notation;
mod spectator_crawl;
mod standings_pages;
mod standings_trf;
mod store;
mod systemd_units;
mod togyz_bad_input;
mod togyz_emulate;
mod togyz_emulator;
mod togyz_irregularities;
mod togyz_live;
mod togyz_pty;
mod togyz_replay;
mod togyz_rules;
mod togyz_tracker;
mod udev_rules;
mod watchdog;
