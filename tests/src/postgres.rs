//! A fresh, migrated Postgres database for each test.
//!
//! Where the server comes from, in order (DESIGN.md §External parts):
//! 1. `DATABASE_URL`: a server someone runs; each test creates its own database there and drops it.
//! 2. A private throw-away cluster from the local PostgreSQL install (`initdb` + `pg_ctl` in a
//!    temp dir). PostgreSQL refuses to run as root, so as root it runs them as user `postgres`.
//! 3. A `postgres` container through testcontainers, when a Docker engine answers.
//! 4. Otherwise an error that says how to get one.

use std::{
    path::Path,
    sync::atomic::{AtomicU32, Ordering},
};

use agentpact_lab::local::PrivateCluster;
pub use agentpact_lab::local::with_database;

use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection, PgPool, postgres::PgPoolOptions};
use testcontainers::{
    ContainerAsync, GenericImage, ImageExt,
    core::{IntoContainerPort, WaitFor},
    runners::AsyncRunner,
};

use crate::HarnessError;

/// A migrated database `agentpact` on a private primary cluster and a hot standby streaming from
/// it (`initdb`, then `pg_basebackup -R`), as a deployment with a read replica runs: the standby
/// serves reads and refuses writes and LISTEN. Dropping it stops both.
pub struct ReplicatedDatabase {
    /// The database's URL on the primary.
    pub primary_url: String,
    /// The same database's URL on the standby.
    pub replica_url: String,
    primary_pool: PgPool,
    replica_pool: PgPool,
    // Declared before the primary: dropped (stopped) first.
    standby: PrivateCluster,
    _primary: PrivateCluster,
}

impl ReplicatedDatabase {
    /// Starts the primary, migrates the database there, and makes and starts its standby.
    pub async fn create() -> Result<Self, HarnessError> {
        let name = unique_name();
        let primary = PrivateCluster::start(&name).map_err(HarnessError::NoPostgres)?;
        let mut admin = PgConnection::connect(&primary.url()).await?;
        admin.execute("CREATE DATABASE agentpact").await?;
        admin.close().await?;
        let primary_url = with_database(&primary.url(), "agentpact");
        let primary_pool = PgPoolOptions::new().max_connections(4).connect(&primary_url).await?;
        agentpact_schema::MIGRATOR.run(&primary_pool).await?;
        let standby = PrivateCluster::standby_of(&primary, &format!("{name}-standby"))
            .map_err(HarnessError::NoPostgres)?;
        let replica_url = with_database(&standby.url(), "agentpact");
        let replica_pool = PgPoolOptions::new().max_connections(4).connect(&replica_url).await?;
        Ok(Self { primary_url, replica_url, primary_pool, replica_pool, standby, _primary: primary })
    }

    /// A pool on the primary.
    pub fn primary(&self) -> &PgPool {
        &self.primary_pool
    }

    /// A pool on the standby.
    pub fn replica(&self) -> &PgPool {
        &self.replica_pool
    }

    /// Stops the standby (its data is kept).
    pub fn stop_replica(&self) -> Result<(), HarnessError> {
        self.standby.stop().map_err(HarnessError::Process)
    }

    /// Starts the standby again; it catches up with the primary by itself.
    pub fn start_replica(&self) -> Result<(), HarnessError> {
        self.standby.start_again().map_err(HarnessError::Process)
    }
}

/// A database of one test's own. Dropping it drops the database (and stops a private server).
pub struct TestDatabase {
    name: String,
    url: String,
    pool: PgPool,
    server: Server,
}

/// What keeps the server alive for as long as the database is in use.
enum Server {
    /// Someone else's server (`DATABASE_URL`); we only drop our database.
    External { admin_url: String },
    /// A cluster this process started; stopped and deleted on drop.
    Private { _cluster: PrivateCluster },
    /// A container; removed on drop.
    Container { _container: Box<ContainerAsync<GenericImage>> },
}

impl TestDatabase {
    /// Creates a fresh database, applies `migrations/` and connects a small pool to it.
    pub async fn create() -> Result<Self, HarnessError> {
        Self::create_at(i64::MAX).await
    }

    /// Creates a fresh database with the migrations up to `version` applied (an index as a build
    /// of that schema left it), for a test of the ones after it: [`Self::migrate`] applies them.
    pub async fn create_at(version: i64) -> Result<Self, HarnessError> {
        let db = Self::empty().await?;
        agentpact_schema::MIGRATOR.run_to(version, &db.pool).await?;
        Ok(db)
    }

    /// Creates a fresh database with nothing in it, not even the migrator's table: for a test
    /// that restores a dump of another build's index.
    pub async fn empty() -> Result<Self, HarnessError> {
        let (admin_url, server) = match std::env::var("DATABASE_URL") {
            Ok(url) if !url.is_empty() => (url.clone(), Server::External { admin_url: url }),
            _ => start_server().await?,
        };
        let name = unique_name();
        let mut admin = PgConnection::connect(&admin_url).await?;
        let create = format!(r#"CREATE DATABASE "{name}""#);
        admin.execute(sqlx::raw_sql(AssertSqlSafe(create))).await?;
        admin.close().await?;

        let url = with_database(&admin_url, &name);
        let pool = PgPoolOptions::new().max_connections(4).connect(&url).await?;
        Ok(Self { name, url, pool, server })
    }

    /// Restores `dump` (plain SQL from `pg_dump --inserts`) into this database, on one connection
    /// that is closed afterwards (a dump sets its session's `search_path` to nothing). psql's own
    /// commands in it (`\restrict`, `\unrestrict`) are left out: they are not SQL.
    pub async fn restore(&self, dump: &str) -> Result<(), HarnessError> {
        let psql = |l: &&str| l.starts_with("\\restrict ") || l.starts_with("\\unrestrict ");
        let sql: String = dump.lines().filter(|l| !psql(l)).collect::<Vec<_>>().join("\n");
        let mut conn = self.pool.acquire().await?.detach();
        conn.execute(sqlx::raw_sql(AssertSqlSafe(sql))).await?;
        conn.close().await?;
        Ok(())
    }

    /// Applies every migration not yet applied, as `agentpact migrate` does.
    pub async fn migrate(&self) -> Result<(), HarnessError> {
        Ok(agentpact_schema::MIGRATOR.run(&self.pool).await?)
    }

    /// The connection URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name (unique per test).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A pool connected to this database.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Server::External { admin_url } = &self.server {
            // Drop runs inside the test's runtime; a thread with its own runtime can block on the
            // DROP without stalling that runtime.
            let (admin_url, name) = (admin_url.clone(), self.name.clone());
            let dropped = std::thread::spawn(move || drop_database(&admin_url, &name)).join();
            if let Ok(Err(e)) = dropped {
                eprintln!("warning: could not drop test database {}: {e}", self.name);
            }
        }
    }
}

fn drop_database(admin_url: &str, name: &str) -> Result<(), sqlx::Error> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut admin = PgConnection::connect(admin_url).await?;
        let sql = format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#);
        admin.execute(sqlx::raw_sql(AssertSqlSafe(sql))).await?;
        admin.close().await
    })
}

/// A name no other test of any process on this machine will pick at the same time.
fn unique_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("agentpact_test_{}_{n}_{nanos}", std::process::id())
}

async fn start_server() -> Result<(String, Server), HarnessError> {
    let cluster_error = match PrivateCluster::start(&unique_name()) {
        Ok(cluster) => return Ok((cluster.url(), Server::Private { _cluster: cluster })),
        Err(e) => e,
    };
    let docker_error = match start_container().await {
        Ok(found) => return Ok(found),
        Err(e) => e,
    };
    Err(HarnessError::NoPostgres(format!(
        "no Postgres for the tests. Set DATABASE_URL to a server the tests may create databases on \
         (e.g. postgres://postgres@127.0.0.1:5432/postgres), or install PostgreSQL (initdb, pg_ctl), \
         or start a Docker engine.\n  private cluster: {cluster_error}\n  docker: {docker_error}"
    )))
}

async fn start_container() -> Result<(String, Server), String> {
    let docker_socket = Path::new("/var/run/docker.sock").exists();
    if std::env::var_os("DOCKER_HOST").is_none() && !docker_socket {
        return Err("no Docker engine (no DOCKER_HOST, no /var/run/docker.sock)".into());
    }
    let container = GenericImage::new("postgres", "16-alpine")
        .with_exposed_port(5432.tcp())
        .with_wait_for(WaitFor::message_on_stderr("database system is ready to accept connections"))
        .with_env_var("POSTGRES_HOST_AUTH_METHOD", "trust")
        .start()
        .await
        .map_err(|e| e.to_string())?;
    let port = container.get_host_port_ipv4(5432).await.map_err(|e| e.to_string())?;
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    Ok((url, Server::Container { _container: Box::new(container) }))
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn with_database_replaces_only_the_path() {
        assert_eq!(with_database("postgres://u@h:5432/postgres", "x"), "postgres://u@h:5432/x");
        assert_eq!(with_database("postgres://u@h:5432", "x"), "postgres://u@h:5432/x");
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
    }
}
