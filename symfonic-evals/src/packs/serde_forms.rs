//! JSON forms pack arguments accept beyond serde's defaults.

use serde::{Deserialize, Deserializer};

/// A list of strings, also accepted as one string: `"PauseTokenReplayedError"`
/// and `["PauseTokenReplayedError", "gone"]` both read as a list.
pub(crate) fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Form::deserialize(deserializer)? {
        Form::One(one) => vec![one],
        Form::Many(many) => many,
    })
}
