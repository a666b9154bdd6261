//! SCRAM-SHA-256 password authentication, the server's side (RFC 5802, RFC 7677), as
//! PostgreSQL speaks it: no channel binding, the user name taken from the StartupMessage.
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
pub enum ScramError {
    /// The client's message does not follow RFC 5802.
    Malformed(&'static str),
    /// The proof is wrong: wrong password or unknown user.
    Failed,
}

/// One authentication exchange, after the server-first message.
pub struct Exchange {
    verifier: Verifier,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    gs2_header: String,
}

impl Exchange {
    /// Answer the client-first message for a user with `verifier` (`None`: unknown user);
    /// returns the exchange and the server-first message.
    pub fn start(
        verifier: Option<&Verifier>,
        client_first: &[u8],
    ) -> Result<(Exchange, String), ScramError> {
        let text = std::str::from_utf8(client_first).map_err(|_| ScramError::Malformed("UTF-8"))?;
        // gs2-header: "n,," (no channel binding) or "y,,"; "p=" asks for channel binding.
        let (flag, rest) = text
            .split_once(',')
            .ok_or(ScramError::Malformed("gs2 header"))?;
        if flag != "n" && flag != "y" {
            return Err(ScramError::Malformed("channel binding is not supported"));
        }
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
            gs2_header: format!("{flag},{_authzid},"),
        };
        Ok((exchange, server_first))
    }

    /// Check the client-final message's proof; returns the server-final message.
    pub fn finish(self, client_final: &[u8]) -> Result<String, ScramError> {
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
        if binding != self.gs2_header.as_bytes() {
            return Err(ScramError::Malformed("channel binding"));
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
        let (mut ex, _) =
            Exchange::start(Some(&verifier), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO").unwrap();
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
        let (ex, server_first) = Exchange::start(Some(&v), b"n,,n=,r=abc").unwrap();
        assert!(server_first.starts_with("r=abc"));
        let bad = format!(
            "c=biws,r={},p={}",
            &server_first[2..server_first.find(',').unwrap()],
            B64.encode([0u8; 32])
        );
        assert_eq!(ex.finish(bad.as_bytes()), Err(ScramError::Failed));
        assert!(Exchange::start(Some(&v), b"p=tls-server-end-point,,n=,r=x").is_err());
    }
}
