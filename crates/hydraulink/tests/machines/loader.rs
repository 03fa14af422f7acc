//! The front loader of `models/loader.toml`.
