//! A small client of Flink's REST API (the JobManager's `rest.port`): upload a jar, run
//! it, read a job's state and metrics, cancel it. Plain HTTP/1.1 over one connection per
//! request (the cluster is on a trusted network, as Flink's REST API assumes).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::Value as Json;

/// Why a REST call failed.
pub(crate) type RestError = String;

/// Bytes of a response body read at most (Flink's answers are small JSON documents).
const BODY_MAX: usize = 16 << 20;

/// A Flink cluster's REST endpoint, e.g. `http://127.0.0.1:8081`.
#[derive(Clone, Debug)]
pub(crate) struct Rest {
    host: String,
    port: u16,
    timeout: Duration,
}

impl Rest {
    /// The endpoint at `url` (`http://host:port`; `https` is not spoken).
    ///
    /// Errors: a message when `url` is not `http://host:port`.
    pub(crate) fn new(url: &str) -> Result<Rest, RestError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("the REST address {url} is not http://host:port"))?
            .trim_end_matches('/');
        let (host, port) = rest
            .rsplit_once(':')
            .ok_or_else(|| format!("the REST address {url} has no port"))?;
        let port = port
            .parse()
            .map_err(|_| format!("the REST address {url} has a bad port"))?;
        Ok(Rest {
            host: host.to_string(),
            port,
            timeout: Duration::from_secs(120),
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Bytes,
    ) -> Result<Json, RestError> {
        let addr = format!("{}:{}", self.host, self.port);
        let work = async {
            let tcp = tokio::net::TcpStream::connect(&addr)
                .await
                .map_err(|e| format!("cannot reach Flink's REST API at {addr}: {e}"))?;
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(conn);
            let req = Request::builder()
                .method(method.clone())
                .uri(path)
                .header("host", &addr)
                .header("content-type", content_type)
                .body(Full::new(body))
                .map_err(|e| e.to_string())?;
            let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
            let status = resp.status();
            let body = http_body_util::Limited::new(resp.into_body(), BODY_MAX)
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            let json: Json = if body.is_empty() {
                Json::Null
            } else {
                serde_json::from_slice(&body).map_err(|e| {
                    format!(
                        "{method} {path}: not JSON ({e}): {}",
                        String::from_utf8_lossy(&body)
                    )
                })?
            };
            if !status.is_success() {
                let errors = json
                    .get("errors")
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                return Err(format!("{method} {path}: HTTP {status}: {errors}"));
            }
            Ok(json)
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| format!("{method} {path}: no answer in {:?}", self.timeout))?
    }

    /// GET `path`, a JSON answer.
    pub(crate) async fn get(&self, path: &str) -> Result<Json, RestError> {
        self.call(Method::GET, path, "application/json", Bytes::new())
            .await
    }

    /// POST `body` as JSON to `path`.
    pub(crate) async fn post(&self, path: &str, body: &Json) -> Result<Json, RestError> {
        let bytes = Bytes::from(body.to_string());
        self.call(Method::POST, path, "application/json", bytes)
            .await
    }

    /// Upload `jar` (its bytes) as `name`; the jar's id for [`Rest::run_jar`].
    pub(crate) async fn upload_jar(&self, name: &str, jar: Vec<u8>) -> Result<String, RestError> {
        let boundary = "tcq-flink-upload-8f3a2c";
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\"{name}\"\r\nContent-Type: application/x-java-archive\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(&jar);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let ct = format!("multipart/form-data; boundary={boundary}");
        let answer = self
            .call(Method::POST, "/jars/upload", &ct, Bytes::from(body))
            .await?;
        let file = answer["filename"]
            .as_str()
            .ok_or_else(|| format!("jar upload answered {answer}"))?;
        Ok(file.rsplit('/').next().unwrap_or(file).to_string())
    }

    /// Run the uploaded jar `id`'s `entry_class` with `args` at `parallelism`; the job id.
    pub(crate) async fn run_jar(
        &self,
        id: &str,
        entry_class: &str,
        args: &[String],
        parallelism: Option<u32>,
    ) -> Result<String, RestError> {
        let mut req = serde_json::json!({ "entryClass": entry_class, "programArgsList": args });
        if let Some(p) = parallelism {
            req["parallelism"] = p.into();
        }
        let answer = self.post(&format!("/jars/{id}/run"), &req).await?;
        answer["jobid"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("jar run answered {answer}"))
    }

    /// Delete the uploaded jar `id`.
    pub(crate) async fn delete_jar(&self, id: &str) -> Result<(), RestError> {
        self.call(
            Method::DELETE,
            &format!("/jars/{id}"),
            "application/json",
            Bytes::new(),
        )
        .await
        .map(|_| ())
    }

    /// The job's state (`CREATED`, `RUNNING`, `FINISHED`, `FAILED`, `CANCELED`, ...).
    pub(crate) async fn job_state(&self, job: &str) -> Result<String, RestError> {
        let j = self.get(&format!("/jobs/{job}")).await?;
        j["state"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("job {job}: {j}"))
    }

    /// Cancel the job.
    pub(crate) async fn cancel(&self, job: &str) -> Result<(), RestError> {
        self.call(
            Method::PATCH,
            &format!("/jobs/{job}?mode=cancel"),
            "application/json",
            Bytes::new(),
        )
        .await
        .map(|_| ())
    }

    /// Records dropped as late by the job's window operators: the sum over its vertices
    /// and subtasks of every `numLateRecordsDropped` metric.
    pub(crate) async fn late_records_dropped(&self, job: &str) -> Result<u64, RestError> {
        let j = self.get(&format!("/jobs/{job}")).await?;
        let mut total = 0u64;
        for v in j["vertices"].as_array().cloned().unwrap_or_default() {
            let Some(vid) = v["id"].as_str() else {
                continue;
            };
            let base = format!("/jobs/{job}/vertices/{vid}/subtasks/metrics");
            let names = self.get(&base).await?;
            let late: Vec<String> = names
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str())
                .filter(|id| id.ends_with("numLateRecordsDropped"))
                .map(str::to_string)
                .collect();
            if late.is_empty() {
                continue;
            }
            let values = self
                .get(&format!("{base}?get={}&agg=sum", late.join(",")))
                .await?;
            for m in values.as_array().into_iter().flatten() {
                total += m["sum"].as_f64().unwrap_or(0.0) as u64;
            }
        }
        Ok(total)
    }
}
