//! SCRAM-SHA-256 password authentication, the server's side (RFC 5802, RFC 7677), as
//! PostgreSQL speaks it: the user name taken from the StartupMessage, and over TLS also
//! SCRAM-SHA-256-PLUS, bound to the channel by `tls-server-end-point` (RFC 5929; see
//! `end_point`), so that a client with `channel_binding=require` knows no one in the
//! middle relayed its proof.
//!
//! A password is kept only as PostgreSQL's verifier ([`crate::password::Verifier`]).
//! [`Exchange`] runs the two round trips: client-first to server-first, then client-final
//! (the proof) to server-final.
//!
//! Design decision: an unknown user gets a full exchange against a random verifier and fails
//! at the proof, like a wrong password, so the answers do not tell which users exist.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::password::{hmac, random_bytes, Verifier};

/// Why an exchange failed; every variant ends the connection with 28P01 (or 08P01 for a
/// malformed message).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ScramError {
    /// The client's message does not follow RFC 5802.
    Malformed(&'static str),
    /// The proof is wrong: wrong password or unknown user.
    Failed,
}

/// The mechanism names, as the AuthenticationSASL message lists them.
pub(crate) const SCRAM_SHA_256: &str = "SCRAM-SHA-256";
/// SCRAM with channel binding (offered over TLS only).
pub(crate) const SCRAM_SHA_256_PLUS: &str = "SCRAM-SHA-256-PLUS";

/// What the connection offers for channel binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    /// Plain TCP (or TLS without binding data): SCRAM-SHA-256 only.
    Unavailable,
    /// TLS, SCRAM-SHA-256-PLUS offered with this `tls-server-end-point` data.
    EndPoint(Vec<u8>),
}

/// One authentication exchange, after the server-first message.
pub(crate) struct Exchange {
    verifier: Verifier,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    /// What the client-final message's `c=` must decode to: the gs2 header, followed by
    /// the channel binding data when the client asked for binding.
    expected_binding: Vec<u8>,
}

impl Exchange {
    /// Answer the client-first message of `mechanism` for a user with `verifier` (`None`:
    /// unknown user) on a connection offering `binding`; returns the exchange and the
    /// server-first message. Errors (Malformed, 08P01 as in PostgreSQL): a gs2 header that
    /// does not fit the mechanism, or `y` (the client would bind but believes the server
    /// cannot) when SCRAM-SHA-256-PLUS was offered, which is a downgrade.
    pub(crate) fn start(
        verifier: Option<&Verifier>,
        mechanism: &str,
        binding: &Binding,
        client_first: &[u8],
    ) -> Result<(Exchange, String), ScramError> {
        let text = std::str::from_utf8(client_first).map_err(|_| ScramError::Malformed("UTF-8"))?;
        // gs2-header: "n,," (no channel binding), "y,," (the client could bind but thinks
        // the server cannot), "p=tls-server-end-point,," (bound, SCRAM-SHA-256-PLUS).
        let (flag, rest) = text
            .split_once(',')
            .ok_or(ScramError::Malformed("gs2 header"))?;
        let plus = mechanism == SCRAM_SHA_256_PLUS;
        let binding_data: &[u8] = match (flag, plus, binding) {
            ("p=tls-server-end-point", true, Binding::EndPoint(data)) => data,
            (_, true, _) => {
                return Err(ScramError::Malformed(
                    "SCRAM-SHA-256-PLUS needs channel binding type tls-server-end-point",
                ))
            }
            ("n", false, _) | ("y", false, Binding::Unavailable) => &[],
            ("y", false, Binding::EndPoint(_)) => {
                return Err(ScramError::Malformed(
                    "channel binding negotiation: the client supports channel binding but thinks the server does not, and this server does",
                ))
            }
            _ => {
                return Err(ScramError::Malformed(
                    "channel binding requested without SCRAM-SHA-256-PLUS",
                ))
            }
        };
        let (_authzid, bare) = rest
            .split_once(',')
            .ok_or(ScramError::Malformed("gs2 header"))?;
        let client_nonce = bare
            .split(',')
            .find_map(|a| a.strip_prefix("r="))
            .filter(|n| !n.is_empty())
            .ok_or(ScramError::Malformed("client nonce"))?;
        let verifier = verifier.cloned().unwrap_or_else(Verifier::random);
        let nonce = format!("{client_nonce}{}", B64.encode(random_bytes::<18>()));
        let server_first = format!(
            "r={nonce},s={},i={}",
            B64.encode(&verifier.salt),
            verifier.iterations
        );
        let exchange = Exchange {
            verifier,
            client_first_bare: bare.to_string(),
            server_first: server_first.clone(),
            nonce,
            expected_binding: [format!("{flag},{_authzid},").as_bytes(), binding_data].concat(),
        };
        Ok((exchange, server_first))
    }

    /// Check the client-final message's proof; returns the server-final message.
    pub(crate) fn finish(self, client_final: &[u8]) -> Result<String, ScramError> {
        let text = std::str::from_utf8(client_final).map_err(|_| ScramError::Malformed("UTF-8"))?;
        let (without_proof, proof) = text
            .rsplit_once(",p=")
            .ok_or(ScramError::Malformed("proof"))?;
        let mut binding = None;
        let mut nonce = None;
        for attr in without_proof.split(',') {
            if let Some(c) = attr.strip_prefix("c=") {
                binding = Some(c);
            } else if let Some(r) = attr.strip_prefix("r=") {
                nonce = Some(r);
            }
        }
        let binding = B64
            .decode(binding.ok_or(ScramError::Malformed("channel binding"))?)
            .map_err(|_| ScramError::Malformed("channel binding"))?;
        if binding != self.expected_binding {
            // For SCRAM-SHA-256-PLUS: the client bound to another certificate (a relay).
            return Err(ScramError::Malformed("channel binding check failed"));
        }
        if nonce != Some(self.nonce.as_str()) {
            return Err(ScramError::Malformed("nonce"));
        }
        let proof: [u8; 32] = B64
            .decode(proof)
            .ok()
            .and_then(|p| p.try_into().ok())
            .ok_or(ScramError::Malformed("proof"))?;
        let auth_message = format!(
            "{},{},{without_proof}",
            self.client_first_bare, self.server_first
        );
        let signature = hmac(&self.verifier.stored_key, auth_message.as_bytes());
        let mut client_key = proof;
        client_key
            .iter_mut()
            .zip(signature)
            .for_each(|(k, s)| *k ^= s);
        let stored: [u8; 32] = Sha256::digest(client_key).into();
        // Compare without an early exit, so timing tells nothing about the key.
        let diff = stored
            .iter()
            .zip(self.verifier.stored_key)
            .fold(0u8, |d, (a, b)| d | (a ^ b));
        if diff != 0 {
            return Err(ScramError::Failed);
        }
        let server_signature = hmac(&self.verifier.server_key, auth_message.as_bytes());
        Ok(format!("v={}", B64.encode(server_signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::password::salted_password;

    /// RFC 7677's example exchange, user "user", password "pencil".
    #[test]
    fn rfc7677_example() {
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let salted = salted_password("pencil", &salt, 4096);
        let client_key = hmac(&salted, b"Client Key");
        let verifier = Verifier {
            salt,
            iterations: 4096,
            stored_key: Sha256::digest(client_key).into(),
            server_key: hmac(&salted, b"Server Key"),
        };
        let server_nonce_suffix = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let (mut ex, _) = Exchange::start(
            Some(&verifier),
            SCRAM_SHA_256,
            &Binding::Unavailable,
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
        )
        .unwrap();
        // Replay the RFC's server nonce.
        ex.nonce = format!("rOprNGfwEbeRWgbNEkqO{server_nonce_suffix}");
        ex.server_first = format!("r={},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", ex.nonce);
        let final_msg = format!(
            "c=biws,r={},p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            ex.nonce
        );
        assert_eq!(
            ex.finish(final_msg.as_bytes()).unwrap(),
            "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
    }

    #[test]
    fn check_password_accepts_the_password_and_nothing_else() {
        let v = Verifier::from_password("pencil");
        assert!(v.check_password("pencil"));
        assert!(!v.check_password("pencil "));
        assert!(!v.check_password(""));
        // The same verifier read back from PostgreSQL's stored form.
        let stored = Verifier::parse(&v.to_string()).unwrap();
        assert!(stored.check_password("pencil"));
    }

    #[test]
    fn verifiers_round_trip_and_a_wrong_proof_fails() {
        let v = Verifier::from_password("secret");
        assert_eq!(Verifier::parse(&v.to_string()), Some(v.clone()));
        let none = Binding::Unavailable;
        let (ex, server_first) =
            Exchange::start(Some(&v), SCRAM_SHA_256, &none, b"n,,n=,r=abc").unwrap();
        assert!(server_first.starts_with("r=abc"));
        let bad = format!(
            "c=biws,r={},p={}",
            &server_first[2..server_first.find(',').unwrap()],
            B64.encode([0u8; 32])
        );
        assert_eq!(ex.finish(bad.as_bytes()), Err(ScramError::Failed));
        assert!(Exchange::start(
            Some(&v),
            SCRAM_SHA_256,
            &none,
            b"p=tls-server-end-point,,n=,r=x"
        )
        .is_err());
    }

    /// SCRAM-SHA-256-PLUS: `c=` must carry the gs2 header and this server's binding data;
    /// a client that says `y` where PLUS was offered is refused (a downgrade).
    #[test]
    fn channel_binding_checks_the_end_point_data() {
        let v = Verifier::from_password("secret");
        let ours = Binding::EndPoint(vec![7; 32]);
        let first = b"p=tls-server-end-point,,n=,r=abc";
        let (ex, server_first) =
            Exchange::start(Some(&v), SCRAM_SHA_256_PLUS, &ours, first).unwrap();
        let nonce = &server_first[2..server_first.find(',').unwrap()];
        let relayed = [b"p=tls-server-end-point,,".as_slice(), &[8; 32]].concat();
        let wrong = format!(
            "c={},r={nonce},p={}",
            B64.encode(relayed),
            B64.encode([0u8; 32])
        );
        assert_eq!(
            ex.finish(wrong.as_bytes()),
            Err(ScramError::Malformed("channel binding check failed"))
        );
        for (mechanism, first) in [
            (SCRAM_SHA_256_PLUS, b"n,,n=,r=abc".as_slice()),
            (SCRAM_SHA_256, b"y,,n=,r=abc".as_slice()),
            (
                SCRAM_SHA_256,
                b"p=tls-server-end-point,,n=,r=abc".as_slice(),
            ),
        ] {
            assert!(matches!(
                Exchange::start(Some(&v), mechanism, &ours, first),
                Err(ScramError::Malformed(_))
            ));
        }
        assert!(Exchange::start(Some(&v), SCRAM_SHA_256, &ours, b"n,,n=,r=abc").is_ok());
    }
}
