//! What a pack's model endpoint does, from [`RunOptions`](crate::RunOptions)
//! and the environment: the mode, the cassette, the volatile fields, the
//! scrub patterns and the upstream.

use std::path::{Path, PathBuf};

use super::error::ReplayError;
use super::mode::ReplayMode;

/// Chooses recording: `missing` records what the cassette lacks, `all`
/// records every exchange afresh. Unset (or empty) means replay.
pub const RECORD_ENV: &str = "SYMFONIC_EVALS_RECORD";
/// Where record mode forwards to, e.g. `https://api.openai.com`; the
/// request's path (`/v1/chat/completions`) is appended.
pub const UPSTREAM_URL_ENV: &str = "SYMFONIC_EVALS_UPSTREAM_URL";
/// The key record mode presents to the upstream. Never stored.
pub const UPSTREAM_KEY_ENV: &str = "SYMFONIC_EVALS_UPSTREAM_KEY";
/// How the key is presented: `bearer` (`Authorization: Bearer`), `x-api-key`,
/// or `auto` (the default: `x-api-key` for Anthropic's `/v1/messages`,
/// bearer otherwise).
pub const UPSTREAM_AUTH_ENV: &str = "SYMFONIC_EVALS_UPSTREAM_AUTH";
/// Set to `true` (or `1`) by CI services; recording is refused under it so a
/// CI run can never reach a model or write a cassette.
pub const CI_ENV: &str = "CI";

/// The volatile fields ignored by default when keying a request: values an
/// SDK or a deployment may vary between runs without changing what it asks.
pub const DEFAULT_VOLATILE_FIELDS: &[&str] = &[
    "user",
    "metadata.user_id",
    "prompt_cache_key",
    "safety_identifier",
];

/// A pack's replay configuration, part of [`RunOptions`](crate::RunOptions).
/// Every field left at its default is taken from the environment or the
/// documented default, so `ReplayConfig::default()` is what an attribute
/// pack runs with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplayConfig {
    /// Forces a mode. `None` reads [`RECORD_ENV`] (unset: replay). An
    /// explicit mode wins over the environment, so a test that records
    /// against its own scripted upstream is not changed by a developer's
    /// shell.
    pub mode: Option<ReplayMode>,
    /// The cassette file. `None` is `<crate>/cassettes/<pack name>.jsonl`,
    /// where `<crate>` is `CARGO_MANIFEST_DIR` (set by `cargo test` and
    /// `cargo run`) or else the current directory; see [`default_cassette`].
    pub cassette: Option<PathBuf>,
    /// Extra volatile fields, as dotted paths (`metadata.trace_id`,
    /// `messages.*.id` with `*` for any key or index), ignored when keying a
    /// request in addition to [`DEFAULT_VOLATILE_FIELDS`].
    pub volatile_fields: Vec<String>,
    /// Drops [`DEFAULT_VOLATILE_FIELDS`], keeping only `volatile_fields`.
    pub no_default_volatile_fields: bool,
    /// Extra patterns scrubbed from everything stored: literal text in which
    /// `*` stands for a run of token characters (letters, digits, `.`, `_`,
    /// `-`), e.g. `acct-*` or `internal-host.example`. Credentials (known key
    /// prefixes, bearer tokens, secret-named JSON fields) and the upstream
    /// key are always scrubbed.
    pub scrub_patterns: Vec<String>,
    /// The upstream to record from. `None` reads [`UPSTREAM_URL_ENV`].
    pub upstream_url: Option<String>,
    /// Lets a recording mode run under [`CI_ENV`] when the upstream is on
    /// this machine's loopback interface (`127.0.0.0/8`, `::1`,
    /// `localhost`): for tests of the recording path itself, which record
    /// from a scripted upstream they started into a scratch cassette. A
    /// remote upstream is still refused, so this can never let CI reach a
    /// model provider.
    pub loopback_recording_in_ci: bool,
}

impl ReplayConfig {
    /// A configuration forcing `mode`.
    pub fn mode(mode: ReplayMode) -> Self {
        Self {
            mode: Some(mode),
            ..Self::default()
        }
    }

    /// This configuration with the cassette at `path`.
    #[must_use]
    pub fn with_cassette(mut self, path: impl Into<PathBuf>) -> Self {
        self.cassette = Some(path.into());
        self
    }

    /// This configuration recording from `url`.
    #[must_use]
    pub fn with_upstream(mut self, url: impl Into<String>) -> Self {
        self.upstream_url = Some(url.into());
        self
    }

    /// This configuration allowed to record under CI from a loopback
    /// upstream; see [`Self::loopback_recording_in_ci`].
    #[must_use]
    pub fn allowing_loopback_recording_in_ci(mut self) -> Self {
        self.loopback_recording_in_ci = true;
        self
    }
}

/// Whether `url`'s host is this machine's loopback interface. Anything that
/// does not parse as `scheme://host[:port][/path]` is not.
fn is_loopback_url(url: &str) -> bool {
    let Some((_, rest)) = url.trim().split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// How the upstream key is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamAuth {
    /// `x-api-key` for `/v1/messages`, bearer otherwise.
    Auto,
    /// `Authorization: Bearer <key>`.
    Bearer,
    /// `x-api-key: <key>`.
    XApiKey,
}

/// Where record mode forwards, and with which key.
#[derive(Clone, PartialEq, Eq)]
pub struct Upstream {
    /// Base URL; the request path is appended.
    pub url: String,
    /// The key, if the upstream needs one. Never stored, never printed.
    pub key: Option<String>,
    /// How the key is presented.
    pub auth: UpstreamAuth,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("url", &super::target::without_query(&self.url))
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .field("auth", &self.auth)
            .finish()
    }
}

/// A configuration resolved against the environment: what one pack run's
/// endpoints actually do.
#[derive(Debug, Clone)]
pub struct ReplaySettings {
    /// The mode in force.
    pub mode: ReplayMode,
    /// The reviewed cassette.
    pub cassette: PathBuf,
    /// Where new exchanges wait for review.
    pub pending: PathBuf,
    /// Every volatile field, defaults included.
    pub volatile_fields: Vec<String>,
    /// Every adopter scrub pattern.
    pub scrub_patterns: Vec<String>,
    /// The upstream, in record modes.
    pub upstream: Option<Upstream>,
}

impl ReplaySettings {
    /// Resolves `config` for the pack run `pack` against the process
    /// environment.
    ///
    /// # Errors
    ///
    /// See [`Self::resolve_with`].
    pub fn resolve(pack: &str, config: &ReplayConfig) -> Result<Self, ReplayError> {
        Self::resolve_with(pack, config, |name| std::env::var(name).ok())
    }

    /// Resolves `config` with `env` standing for the environment.
    ///
    /// # Errors
    ///
    /// `InvalidRecordMode` for an unknown [`RECORD_ENV`] value,
    /// `RecordingRefusedInCi` for any recording mode under [`CI_ENV`]
    /// (unless [`ReplayConfig::loopback_recording_in_ci`] admits a loopback
    /// upstream), `NoUpstream` for a recording mode without an upstream URL.
    pub fn resolve_with(
        pack: &str,
        config: &ReplayConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ReplayError> {
        let mode = match config.mode {
            Some(mode) => mode,
            None => match env(RECORD_ENV).as_deref().map(str::trim) {
                None | Some("" | "0" | "false" | "none" | "replay") => ReplayMode::Replay,
                Some("missing" | "new") => ReplayMode::RecordMissing,
                Some("all") => ReplayMode::RecordAll,
                Some(other) => return Err(ReplayError::InvalidRecordMode(other.to_owned())),
            },
        };
        let in_ci = mode.records() && env(CI_ENV).is_some_and(|v| is_true(&v));
        if in_ci && !config.loopback_recording_in_ci {
            return Err(ReplayError::RecordingRefusedInCi {
                mode,
                remote_upstream: None,
            });
        }
        let cassette = config
            .cassette
            .clone()
            .unwrap_or_else(|| default_cassette(pack, env("CARGO_MANIFEST_DIR").as_deref()));
        let mut volatile_fields: Vec<String> = if config.no_default_volatile_fields {
            Vec::new()
        } else {
            DEFAULT_VOLATILE_FIELDS
                .iter()
                .map(|s| (*s).to_owned())
                .collect()
        };
        volatile_fields.extend(config.volatile_fields.iter().cloned());
        let upstream = if mode.records() {
            let url = config
                .upstream_url
                .clone()
                .or_else(|| env(UPSTREAM_URL_ENV))
                .filter(|u| !u.trim().is_empty())
                .ok_or(ReplayError::NoUpstream)?;
            if in_ci && !is_loopback_url(&url) {
                return Err(ReplayError::RecordingRefusedInCi {
                    mode,
                    remote_upstream: Some(url),
                });
            }
            let auth = match env(UPSTREAM_AUTH_ENV).as_deref().map(str::trim) {
                None | Some("" | "auto") => UpstreamAuth::Auto,
                Some("bearer") => UpstreamAuth::Bearer,
                Some("x-api-key") => UpstreamAuth::XApiKey,
                Some(other) => return Err(ReplayError::InvalidUpstreamAuth(other.to_owned())),
            };
            Some(Upstream {
                url: url.trim_end_matches('/').to_owned(),
                key: env(UPSTREAM_KEY_ENV).filter(|k| !k.is_empty()),
                auth,
            })
        } else {
            None
        };
        Ok(Self {
            mode,
            pending: pending_path(&cassette),
            cassette,
            volatile_fields,
            scrub_patterns: config.scrub_patterns.clone(),
            upstream,
        })
    }
}

fn is_true(value: &str) -> bool {
    let value = value.trim();
    !value.is_empty() && value != "0" && !value.eq_ignore_ascii_case("false")
}

/// The default cassette of the pack run `pack`:
/// `<manifest_dir>/cassettes/<file>.jsonl`, where `<file>` is the pack name
/// with each `::` turned into `.` and any character other than letters,
/// digits, `.`, `_` and `-` into `_`. Without a manifest directory the path
/// is relative to the current directory.
///
/// ```
/// use std::path::Path;
/// use symfonic_evals::replay::default_cassette;
/// assert_eq!(
///     default_cassette("my_tests::refund_rule", Some("/crate")),
///     Path::new("/crate/cassettes/my_tests.refund_rule.jsonl"),
/// );
/// ```
pub fn default_cassette(pack: &str, manifest_dir: Option<&str>) -> PathBuf {
    let file: String = pack
        .replace("::", ".")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = manifest_dir.map_or_else(PathBuf::new, PathBuf::from);
    base.join("cassettes").join(format!("{file}.jsonl"))
}

/// Where the exchanges recorded for `cassette` wait for review:
/// `name.jsonl` becomes `name.pending.jsonl` beside it.
pub fn pending_path(cassette: &Path) -> PathBuf {
    let stem = cassette
        .file_stem()
        .map_or_else(|| "cassette".into(), |s| s.to_string_lossy().into_owned());
    cassette.with_file_name(format!("{stem}.pending.jsonl"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn replay_is_the_default_and_the_environment_chooses_recording() {
        let config = ReplayConfig::default();
        let s = ReplaySettings::resolve_with("p", &config, env(&[])).unwrap();
        assert_eq!(s.mode, ReplayMode::Replay);
        assert!(s.upstream.is_none());
        let s = ReplaySettings::resolve_with(
            "p",
            &config,
            env(&[(RECORD_ENV, "missing"), (UPSTREAM_URL_ENV, "http://up/")]),
        )
        .unwrap();
        assert_eq!(s.mode, ReplayMode::RecordMissing);
        assert_eq!(s.upstream.unwrap().url, "http://up");
        let err = ReplaySettings::resolve_with("p", &config, env(&[(RECORD_ENV, "sometimes")]));
        assert!(matches!(err, Err(ReplayError::InvalidRecordMode(v)) if v == "sometimes"));
    }

    #[test]
    fn recording_under_ci_is_refused_whatever_asks_for_it() {
        for (config, env_pairs) in [
            (ReplayConfig::default(), vec![(RECORD_ENV, "all")]),
            (ReplayConfig::mode(ReplayMode::RecordMissing), vec![]),
        ] {
            let mut pairs = env_pairs;
            pairs.push((CI_ENV, "true"));
            pairs.push((UPSTREAM_URL_ENV, "http://up"));
            let err = ReplaySettings::resolve_with("p", &config, env(&pairs)).unwrap_err();
            assert!(matches!(err, ReplayError::RecordingRefusedInCi { .. }));
            assert!(err.to_string().starts_with("RecordingRefusedInCi"));
        }
        // Replay is what CI is for.
        let s =
            ReplaySettings::resolve_with("p", &ReplayConfig::default(), env(&[(CI_ENV, "true")]));
        assert_eq!(s.unwrap().mode, ReplayMode::Replay);
        // CI=false is not CI.
        let s = ReplaySettings::resolve_with(
            "p",
            &ReplayConfig::default(),
            env(&[
                (CI_ENV, "false"),
                (RECORD_ENV, "all"),
                (UPSTREAM_URL_ENV, "http://u"),
            ]),
        );
        assert_eq!(s.unwrap().mode, ReplayMode::RecordAll);
    }

    #[test]
    fn the_ci_opt_in_admits_only_a_loopback_upstream() {
        let config = ReplayConfig::mode(ReplayMode::RecordAll).allowing_loopback_recording_in_ci();
        for url in [
            "http://127.0.0.1:4000",
            "http://127.8.0.1/v1",
            "http://localhost:80",
            "http://[::1]:9/v1",
            "https://user@LOCALHOST",
        ] {
            let s = ReplaySettings::resolve_with(
                "p",
                &config.clone().with_upstream(url),
                env(&[(CI_ENV, "true")]),
            );
            assert_eq!(s.unwrap().mode, ReplayMode::RecordAll, "{url}");
        }
        for url in [
            "https://api.openai.com",
            "http://localhost.example.com",
            "http://10.0.0.1:80",
            "http://127.0.0.1.example",
            "127.0.0.1:80",
            "http://user@api.openai.com/?h=127.0.0.1",
        ] {
            let err = ReplaySettings::resolve_with(
                "p",
                &config.clone().with_upstream(url),
                env(&[(CI_ENV, "true")]),
            )
            .unwrap_err();
            assert!(
                matches!(&err, ReplayError::RecordingRefusedInCi { remote_upstream: Some(u), .. } if u == url),
                "{url}: {err}"
            );
            assert!(err.to_string().contains("is not on the loopback"), "{err}");
        }
    }

    #[test]
    fn recording_needs_an_upstream() {
        let err = ReplaySettings::resolve_with(
            "p",
            &ReplayConfig::default(),
            env(&[(RECORD_ENV, "missing")]),
        );
        assert!(matches!(err, Err(ReplayError::NoUpstream)));
    }

    #[test]
    fn the_default_cassette_is_per_pack_under_the_crate() {
        let s = ReplaySettings::resolve_with(
            "suite::refunds",
            &ReplayConfig::default(),
            env(&[("CARGO_MANIFEST_DIR", "/c")]),
        )
        .unwrap();
        assert_eq!(s.cassette, Path::new("/c/cassettes/suite.refunds.jsonl"));
        assert_eq!(
            s.pending,
            Path::new("/c/cassettes/suite.refunds.pending.jsonl")
        );
        assert_eq!(
            default_cassette("a b/c", None),
            Path::new("cassettes/a_b_c.jsonl")
        );
    }

    #[test]
    fn volatile_defaults_can_be_extended_or_dropped() {
        let mut config = ReplayConfig {
            volatile_fields: vec!["trace".into()],
            ..ReplayConfig::default()
        };
        let s = ReplaySettings::resolve_with("p", &config, env(&[])).unwrap();
        assert!(s.volatile_fields.contains(&"user".to_owned()));
        assert!(s.volatile_fields.contains(&"trace".to_owned()));
        config.no_default_volatile_fields = true;
        let s = ReplaySettings::resolve_with("p", &config, env(&[])).unwrap();
        assert_eq!(s.volatile_fields, vec!["trace".to_owned()]);
    }
}
