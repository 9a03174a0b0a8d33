use proptest::prelude::*;

use super::*;

/// The forgery the harness made before forgeries had to change meaning:
/// the last letter or digit moved on in its class.
fn last_character_moved(genuine: &str) -> String {
    let mut chars: Vec<char> = genuine.chars().collect();
    if let Some(at) = chars.iter().rposition(char::is_ascii_alphanumeric) {
        chars[at] = next_in_class(chars[at]);
    }
    chars.into_iter().collect()
}

fn every_forgery(genuine: &str) -> Vec<(Forgery, String)> {
    Forgery::ALL
        .iter()
        .map(|&how| (how, forged(genuine, how)))
        .collect()
}

#[test]
fn base64_round_trips_both_alphabets_with_and_without_padding() {
    for (bytes, standard, url) in [
        (&b""[..], "", ""),
        (b"f", "Zg==", "Zg"),
        (b"fo", "Zm8=", "Zm8"),
        (b"foo", "Zm9v", "Zm9v"),
        (b"\xfb\xff", "+/8=", "-_8"),
    ] {
        assert_eq!(encode_base64(bytes, STANDARD, true), standard);
        assert_eq!(encode_base64(bytes, URL_SAFE, false), url);
        if !bytes.is_empty() {
            assert_eq!(decode_base64(standard, STANDARD).as_deref(), Some(bytes));
            assert_eq!(decode_base64(url, URL_SAFE).as_deref(), Some(bytes));
        }
    }
    assert_eq!(decode_base64("Zm9vY", URL_SAFE), None, "5 characters");
    assert_eq!(decode_base64("Zm9v!", URL_SAFE), None);
}

#[test]
fn a_base64url_token_with_padding_bits_is_forged_in_its_bytes() {
    // 16 random bytes as 22 base64url characters: the last one carries 4
    // unused bits. The old forgery moved `Q` to `R`, which decodes to the
    // same bytes, so a deployment that decodes accepted it.
    let genuine = "q83vEjRWeJASNFZ4kBI0VQ";
    let old = last_character_moved(genuine);
    assert_eq!(old, "q83vEjRWeJASNFZ4kBI0VR");
    assert_eq!(
        decode_base64(&old, URL_SAFE),
        decode_base64(genuine, URL_SAFE)
    );
    let forgery = forged(genuine, Forgery::Value);
    assert_eq!(forgery.len(), genuine.len());
    assert_ne!(
        decode_base64(&forgery, URL_SAFE),
        decode_base64(genuine, URL_SAFE)
    );
    assert_eq!(forgery, "q83vEjRWeJASNFZ4kBI0VQ".replacen('q', "r", 1));
}

#[test]
fn a_jwt_is_forged_in_a_byte_of_its_signature() {
    let (header, payload) = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    );
    let signature = "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    let genuine = format!("{header}.{payload}.{signature}");
    let forgery = forged(&genuine, Forgery::Value);
    let (head, forged_signature) = forgery.rsplit_once('.').unwrap();
    assert_eq!(head, format!("{header}.{payload}"));
    assert_eq!(forged_signature.len(), signature.len());
    let mut flipped = decode_base64(signature, URL_SAFE).unwrap();
    flipped[0] ^= 0x04;
    assert_eq!(decode_base64(forged_signature, URL_SAFE), Some(flipped));
    // The old forgery's last character: 2 unused bits, same signature.
    let old = last_character_moved(&genuine);
    assert!(same_meaning(&genuine, &old), "{old}");
    for (how, forgery) in every_forgery(&genuine) {
        assert!(!same_meaning(&genuine, &forgery), "{how:?}: {forgery}");
    }
}

#[test]
fn a_hex_token_is_forged_in_a_digit_and_never_by_its_case() {
    let genuine = "9f86d081884c7d659a2feaa0c55ad015";
    let forgery = forged(genuine, Forgery::Value);
    assert_eq!(forgery, format!("8{}", &genuine[1..]));
    assert_ne!(decode_hex(&forgery), decode_hex(genuine));
    // Hex reads the same in either case: a case flip would be accepted by
    // a correct deployment, so that way of forging falls back to a value.
    let cased = forged(genuine, Forgery::LetterCase);
    assert!(!same_meaning(genuine, &cased), "{cased}");
    assert!(same_meaning(genuine, &genuine.to_uppercase()));
    let uuid = "550e8400-e29b-41d4-a716-446655440000";
    for (how, forgery) in every_forgery(uuid) {
        assert!(!same_meaning(uuid, &forgery), "{how:?}: {forgery}");
    }
}

#[test]
fn a_plain_token_keeps_its_shape() {
    for (genuine, fake) in [("tok:0a9f", "tok:0a9g"), ("t_z:", "t_a:"), ("::", "x:")] {
        assert_eq!(forged(genuine, Forgery::Value), fake, "{genuine}");
    }
    assert_eq!(forged("", Forgery::Value), "x");
    assert_eq!(forged("tok:0a9f", Forgery::LetterCase), "tok:0a9F");
    assert_eq!(forged("tok:0a9f", Forgery::Truncated), "tok:0a9");
    assert_eq!(forged("tok:0a9f", Forgery::Extended), "tok:0a9ff");
}

#[test]
fn truncation_and_extension_change_what_padded_base64_decodes_to() {
    let genuine = "q83vEjRWeJASNFZ4kBI0VQ==";
    for (how, forgery) in every_forgery(genuine) {
        assert!(!same_meaning(genuine, &forgery), "{how:?}: {forgery}");
        assert_ne!(
            decode_base64(&forgery, STANDARD),
            decode_base64(genuine, STANDARD),
            "{how:?}: {forgery}"
        );
    }
}

/// A token as deployments mint them, with the bytes it stands for.
fn minted() -> impl Strategy<Value = (String, Option<Vec<u8>>)> {
    let bytes = proptest::collection::vec(any::<u8>(), 1..40);
    prop_oneof![
        bytes
            .clone()
            .prop_map(|b| (encode_base64(&b, URL_SAFE, false), Some(b))),
        bytes
            .clone()
            .prop_map(|b| (encode_base64(&b, STANDARD, true), Some(b))),
        bytes.clone().prop_map(|b| {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            (hex, None)
        }),
        (bytes.clone(), bytes).prop_map(|(claims, signature)| {
            let jwt = format!(
                "eyJhbGciOiJIUzI1NiJ9.{}.{}",
                encode_base64(&claims, URL_SAFE, false),
                encode_base64(&signature, URL_SAFE, false)
            );
            (jwt, None)
        }),
        "[ -~]{0,30}".prop_map(|s| (s, None)),
        "[A-Za-z0-9_-]{1,30}".prop_map(|s| (s, None)),
    ]
}

proptest! {
    #[test]
    fn a_forgery_never_reads_as_the_genuine_token((genuine, bytes) in minted()) {
        for (how, forgery) in every_forgery(&genuine) {
            prop_assert_ne!(&forgery, &genuine, "{:?}", how);
            prop_assert!(!same_meaning(&genuine, &forgery), "{:?}: {} from {}", how, forgery, genuine);
            if let Some(bytes) = &bytes {
                for alphabet in [URL_SAFE, STANDARD] {
                    let decoded = decode_base64(&forgery, alphabet);
                    prop_assert_ne!(decoded.as_ref(), Some(bytes));
                }
            }
        }
    }
}
