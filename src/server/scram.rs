//! SCRAM-SHA-256 password authentication, the server's side (RFC 5802, RFC 7677), as
//! PostgreSQL speaks it: no channel binding, the user name taken from the StartupMessage.
//!
//! A password is kept only as PostgreSQL's verifier, `SCRAM-SHA-256$<iterations>:<salt>$
//! <StoredKey>:<ServerKey>`, never in clear: [`Verifier::from_password`] derives one,
//! [`Verifier::parse`] reads one a PostgreSQL server would store. [`Exchange`] runs the two
//! round trips: client-first to server-first, then client-final (the proof) to server-final.
//!
//! Design decision: an unknown user gets a full exchange against a random verifier and fails
//! at the proof, like a wrong password, so the answers do not tell which users exist.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// PostgreSQL's default iteration count.
const ITERATIONS: u32 = 4096;

/// A stored SCRAM-SHA-256 verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    salt: Vec<u8>,
    iterations: u32,
    stored_key: [u8; 32],
    server_key: [u8; 32],
}

/// Why an exchange failed; every variant ends the connection with 28P01 (or 08P01 for a
/// malformed message).
#[derive(Debug, PartialEq, Eq)]
pub enum ScramError {
    /// The client's message does not follow RFC 5802.
    Malformed(&'static str),
    /// The proof is wrong: wrong password or unknown user.
    Failed,
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    let mut filled = 0;
    while filled < N {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), N - filled, 0) };
        assert!(
            n > 0 || std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted,
            "getrandom failed: the kernel's random source must be available"
        );
        filled += n.max(0) as usize;
    }
    buf
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// PBKDF2-HMAC-SHA256 with one output block (RFC 5802's `Hi`).
fn salted_password(password: &str, salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut block = salt.to_vec();
    block.extend_from_slice(&1u32.to_be_bytes());
    let mut u = hmac(password.as_bytes(), &block);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password.as_bytes(), &u);
        out.iter_mut().zip(u).for_each(|(o, x)| *o ^= x);
    }
    out
}

impl Verifier {
    /// A verifier for `password` with a fresh random salt.
    pub fn from_password(password: &str) -> Verifier {
        let salt = random_bytes::<16>().to_vec();
        let salted = salted_password(password, &salt, ITERATIONS);
        let client_key = hmac(&salted, b"Client Key");
        Verifier {
            salt,
            iterations: ITERATIONS,
            stored_key: Sha256::digest(client_key).into(),
            server_key: hmac(&salted, b"Server Key"),
        }
    }

    /// Read PostgreSQL's stored form, `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`.
    pub fn parse(text: &str) -> Option<Verifier> {
        let rest = text.strip_prefix("SCRAM-SHA-256$")?;
        let (params, keys) = rest.split_once('$')?;
        let (iterations, salt) = params.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        Some(Verifier {
            iterations: iterations.parse().ok().filter(|&i| i > 0)?,
            salt: B64.decode(salt).ok()?,
            stored_key: B64.decode(stored).ok()?.try_into().ok()?,
            server_key: B64.decode(server).ok()?.try_into().ok()?,
        })
    }

    /// Whether `password` is the one this verifier was derived from (for HTTP Basic
    /// authentication, where the client sends the password itself). The derived StoredKey
    /// is compared in constant time.
    pub fn check_password(&self, password: &str) -> bool {
        use subtle::ConstantTimeEq;
        let salted = salted_password(password, &self.salt, self.iterations);
        let stored: [u8; 32] = Sha256::digest(hmac(&salted, b"Client Key")).into();
        stored.ct_eq(&self.stored_key).into()
    }

    /// A verifier nobody knows the password of (for unknown users).
    fn random() -> Verifier {
        Verifier {
            salt: random_bytes::<16>().to_vec(),
            iterations: ITERATIONS,
            stored_key: random_bytes(),
            server_key: random_bytes(),
        }
    }
}

impl std::fmt::Display for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            B64.encode(&self.salt),
            B64.encode(self.stored_key),
            B64.encode(self.server_key)
        )
    }
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
