//! One board's bytes through decoder, sensor, tracker and store.
