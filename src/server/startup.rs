//! Connection start-up: trust or SCRAM-SHA-256 authentication, backend key, ParameterStatus.
//!
//! Every connection gets a backend id (the engine session's pid, unique per server) and a
//! random secret, and is registered with the connection manager under that pair: a
//! CancelRequest arrives on a separate connection carrying only those two numbers, and the
//! manager is how it finds the query to stop. The ParameterStatus messages are those a
//! PostgreSQL 15 server sends, so drivers configure their date and string handling as for
//! PostgreSQL.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use futures::Sink;
use futures::SinkExt;
use pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata,
    ServerParameterProvider, StartupHandler,
};
use pgwire::api::PgWireConnectionState;
use pgwire::api::{ClientInfo, METADATA_APPLICATION_NAME, METADATA_USER};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::startup::SecretKey;
use pgwire::messages::startup::{Authentication, PasswordMessageFamily};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage, ProtocolVersion};

use super::scram::{Binding, Exchange, ScramError, SCRAM_SHA_256, SCRAM_SHA_256_PLUS};

use super::conn::{Conn, ConnSlot};
use super::Handler;

/// The server version reported to clients: PostgreSQL 15's protocol and catalog subset.
pub(crate) const SERVER_VERSION: &str = "15.0 (tcq)";

/// The ParameterStatus set sent after authentication.
struct ServerParams;

impl ServerParameterProvider for ServerParams {
    fn server_parameters<C>(&self, client: &C) -> Option<HashMap<String, String>>
    where
        C: ClientInfo,
    {
        let meta = client.metadata();
        let mut params: HashMap<String, String> = [
            ("server_version", SERVER_VERSION),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("IntervalStyle", "postgres"),
            ("TimeZone", "UTC"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
            ("default_transaction_read_only", "off"),
            ("in_hot_standby", "off"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        // A start-up TimeZone the session accepted (start-up refuses the others).
        for key in ["TimeZone", "timezone"] {
            if let Some(tz) = meta.get(key).and_then(|v| crate::tz::Zone::parse(v).ok()) {
                params.insert("TimeZone".into(), tz.name().to_string());
            }
        }
        let app = meta
            .get(METADATA_APPLICATION_NAME)
            .cloned()
            .unwrap_or_default();
        params.insert("application_name".into(), app);
        if let Some(user) = meta.get(METADATA_USER) {
            params.insert("session_authorization".into(), user.clone());
        }
        let superuser = meta.get(IS_SUPERUSER).map_or("on", String::as_str);
        params.insert("is_superuser".into(), superuser.to_string());
        Some(params)
    }
}

/// A random 64-bit number from the standard library's per-process random hasher keys.
/// Cancel secrets need to be unguessable by other clients, not cryptographically strong.
fn random_u64(salt: u64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(salt);
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

#[async_trait]
impl StartupHandler for Handler {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let startup = match message {
            PgWireFrontendMessage::Startup(ref startup) => startup,
            PgWireFrontendMessage::PasswordMessageFamily(password) => {
                return self.on_password(client, password).await;
            }
            _ => return Ok(()),
        };
        let max = self.engine.limits().connections_max;
        if self.connections.load(Ordering::Relaxed) > max {
            return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                "53300".into(),
                format!("sorry, too many clients already: max_connections is {max}"),
            ))));
        }
        let peer = client.socket_addr().ip();
        if super::tls_required(
            self.tls.is_some(),
            self.passwords_required,
            peer,
            client.is_secure(),
        ) {
            return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                "28000".into(),
                format!(
                    "connection from host \"{peer}\" without TLS refused: clients beyond loopback must use TLS (sslmode=require)"
                ),
            ))));
        }
        protocol_negotiation(client, startup).await?;
        save_startup_parameters_to_metadata(client, startup);
        if self.passwords_required {
            // Over TLS, SCRAM-SHA-256-PLUS first, as PostgreSQL lists them.
            let binding = match (&self.tls, client.is_secure()) {
                (Some(tls), true) => tls
                    .end_point
                    .clone()
                    .map_or(Binding::Unavailable, Binding::EndPoint),
                _ => Binding::Unavailable,
            };
            let mut mechanisms = vec![SCRAM_SHA_256.to_string()];
            if matches!(binding, Binding::EndPoint(_)) {
                mechanisms.insert(0, SCRAM_SHA_256_PLUS.to_string());
            }
            client
                .send(PgWireBackendMessage::Authentication(Authentication::SASL(
                    mechanisms,
                )))
                .await?;
            client.set_state(PgWireConnectionState::AuthenticationInProgress);
            client.session_extensions().insert(ScramState {
                binding,
                exchange: parking_lot::Mutex::new(None),
            });
            return Ok(());
        }
        self.complete_startup(client).await
    }
}

/// Start-up parameters that are the protocol's, not settings: who connects, to what, the
/// encoding (always UTF8 here), `options` (read by [`startup_options`]), and the keys
/// start-up itself leaves in the metadata.
const PROTOCOL_PARAMETERS: &[&str] = &[
    "user",
    "database",
    "application_name",
    "client_encoding",
    "replication",
    "options",
    IS_SUPERUSER,
];

/// The settings of a start-up `options` value, as PostgreSQL reads it: words separated by
/// blanks (a backslash keeps the next character, blank included), each `-c name=value`,
/// `-cname=value` or `--name=value`. Errors: 42601 for any other word.
fn startup_options(options: &str) -> crate::Result<Vec<(String, String)>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_ascii_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let invalid = |w: &str| {
        crate::Error::Syntax(format!(
            "invalid command-line argument for server process: {w}"
        ))
    };
    let mut settings = Vec::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let pair = if w == "-c" {
            words.next().ok_or_else(|| invalid(&w))?
        } else if let Some(rest) = w.strip_prefix("--").or_else(|| w.strip_prefix("-c")) {
            rest.to_string()
        } else {
            return Err(invalid(&w));
        };
        let (name, value) = pair.split_once('=').ok_or_else(|| invalid(&pair))?;
        settings.push((name.replace('-', "_"), value.to_string()));
    }
    Ok(settings)
}

/// The metadata key under which start-up leaves `on`/`off` for the `is_superuser`
/// ParameterStatus.
const IS_SUPERUSER: &str = "tcq.is_superuser";

/// A connection's SCRAM exchange between its two round trips, and the channel binding
/// its connection offers.
struct ScramState {
    binding: Binding,
    exchange: parking_lot::Mutex<Option<Exchange>>,
}

fn auth_failed(user: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "FATAL".into(),
        "28P01".into(),
        format!("password authentication failed for user \"{user}\""),
    )))
}

fn auth_malformed(what: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "FATAL".into(),
        "08P01".into(),
        format!("malformed SCRAM message: {what}"),
    )))
}

impl Handler {
    /// SASLInitialResponse, then SASLResponse: the two round trips of SCRAM-SHA-256.
    async fn on_password<C>(&self, client: &mut C, msg: PasswordMessageFamily) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let (true, Some(state)) = (
            self.passwords_required,
            client.session_extensions().get::<ScramState>(),
        ) else {
            return Err(auth_malformed("no authentication was requested"));
        };
        let user = client
            .metadata()
            .get(METADATA_USER)
            .cloned()
            .unwrap_or_default();
        let pending = state.exchange.lock().take();
        match pending {
            None => {
                let initial = msg.into_sasl_initial_response()?;
                let plus_offered = matches!(state.binding, Binding::EndPoint(_));
                let method = initial.auth_method.as_str();
                if method != SCRAM_SHA_256 && !(plus_offered && method == SCRAM_SHA_256_PLUS) {
                    return Err(auth_malformed(
                        "mechanism must be one of those offered (SCRAM-SHA-256, and over TLS SCRAM-SHA-256-PLUS)",
                    ));
                }
                let data = initial.data.unwrap_or_default();
                // The password file's users and CREATE ROLE's roles, one list (engine::roles).
                let verifier = self
                    .engine
                    .roles()
                    .get(&user)
                    .and_then(|r| r.password)
                    .and_then(|p| crate::password::Verifier::parse(&p));
                let (exchange, server_first) =
                    Exchange::start(verifier.as_ref(), method, &state.binding, &data).map_err(
                        |e| match e {
                            ScramError::Malformed(what) => auth_malformed(what),
                            ScramError::Failed => auth_failed(&user),
                        },
                    )?;
                *state.exchange.lock() = Some(exchange);
                client
                    .send(PgWireBackendMessage::Authentication(
                        Authentication::SASLContinue(server_first.into_bytes().into()),
                    ))
                    .await?;
                Ok(())
            }
            Some(exchange) => {
                let response = msg.into_sasl_response()?;
                let server_final = exchange.finish(&response.data).map_err(|e| match e {
                    ScramError::Malformed(what) => auth_malformed(what),
                    ScramError::Failed => auth_failed(&user),
                })?;
                client
                    .send(PgWireBackendMessage::Authentication(
                        Authentication::SASLFinal(server_final.into_bytes().into()),
                    ))
                    .await?;
                self.complete_startup(client).await
            }
        }
    }

    /// Backend key, engine session and ParameterStatus once the client is authenticated.
    async fn complete_startup<C>(&self, client: &mut C) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let pid = self.engine.backends().next_pid();
        let secret = match client.protocol_version() {
            ProtocolVersion::PROTOCOL3_0 => SecretKey::I32(random_u64(pid as u64) as i32),
            _ => {
                let bytes: Vec<u8> = (0..4u64)
                    .flat_map(|i| random_u64(pid as u64 ^ (i << 40)).to_be_bytes())
                    .collect();
                SecretKey::Bytes(bytes.into())
            }
        };
        client.set_pid_and_secret_key(pid, secret.clone());
        let (handle, guard) = self.manager.register(pid, secret);
        client.session_extensions().insert(guard);
        let mut session = self.engine.session(pid);
        let param = |k: &str| client.metadata().get(k).cloned();
        let user = param("user").unwrap_or_else(|| "tcq".into());
        let database = param("database").unwrap_or_else(|| user.clone());
        // After authentication, as PostgreSQL checks it: a NOLOGIN role may not connect.
        if self.engine.roles().get(&user).is_some_and(|r| !r.login) {
            return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                "28000".into(),
                format!("role \"{user}\" is not permitted to log in"),
            ))));
        }
        session.set_identity(&user, &database, param("application_name").as_deref());
        session.set_trusted(!self.passwords_required);
        let superuser = if session.is_superuser() { "on" } else { "off" };
        // Every other start-up parameter, and each `-c name=value` of `options` (libpq's
        // PGOPTIONS), is a setting applied as SET applies it; PostgreSQL refuses an unknown
        // one, or a bad value, with FATAL.
        let fatal = |e: crate::Error| {
            PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                super::sqlstate(&e).into(),
                e.to_string(),
            )))
        };
        let mut settings: Vec<(String, String)> = client
            .metadata()
            .iter()
            .filter(|(k, _)| !PROTOCOL_PARAMETERS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        settings.sort();
        if let Some(options) = param("options") {
            settings.extend(startup_options(&options).map_err(fatal)?);
        }
        for (name, value) in &settings {
            session.apply_startup_setting(name, value).map_err(fatal)?;
        }
        // The start-up ParameterStatus set reports the zone the session took.
        let zone = settings
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("timezone"))
            .then(|| session.zone().read().name().to_string());
        let mut conn = Conn::new(session);
        conn.cancel = Some(handle.clone());
        conn.closed = self.watches.lock().remove(&client.socket_addr());
        conn.shutdown = Some(self.shutdown.subscribe());
        let (terminate, terminated) = tokio::sync::watch::channel(false);
        conn.terminated = Some(terminated);
        client.session_extensions().insert(ConnSlot::new(conn));
        let info = crate::engine::backends::BackendInfo {
            pid,
            user: user.clone(),
            database: database.clone(),
            application_name: param("application_name").unwrap_or_default(),
            client_addr: client.socket_addr().ip().to_string(),
            ssl: client
                .session_extensions()
                .get::<crate::engine::backends::SslInfo>()
                .map(|s| (*s).clone()),
        };
        tracing::info!(pid, %user, %database, addr = %client.socket_addr(), "connection authorized");
        let slot = client.session_extensions().get::<ConnSlot>();
        if let Some(slot) = &slot {
            super::notify::attach(&self.engine, slot, info, handle, terminate);
        }
        client
            .metadata_mut()
            .insert(IS_SUPERUSER.into(), superuser.into());
        if let Some(zone) = zone {
            client.metadata_mut().insert("TimeZone".into(), zone);
        }
        finish_authentication(client, &ServerParams).await?;
        // ReadyForQuery is out: the client is idle until its first message.
        if let Some(slot) = slot {
            slot.set_idle(true);
        }
        Ok(())
    }
}
