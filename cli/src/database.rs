//! The index's database (`DATABASE_URL`): opening it, and — for `migrate`, which a newcomer runs
//! first — creating it when it does not exist and applying the migrations.
//!
//! Errors name the database and its server, never the URL (it may carry a password), and carry
//! Postgres' message without sqlx's "at line N" trailer (a line of Postgres' own source).

use std::borrow::Cow;

use anyhow::{Context, anyhow};
use sqlx::{
    PgPool, Postgres,
    migrate::MigrateDatabase,
    postgres::{PgConnectOptions, PgPoolOptions},
};

use crate::settings::DatabaseArgs;

/// Postgres' `invalid_catalog_name`: the database named does not exist.
const NO_SUCH_DATABASE: &str = "3D000";
/// Postgres' `duplicate_database`: another process created it first.
const DATABASE_EXISTS: &str = "42P04";

/// A pool of `size` connections to DATABASE_URL. A missing database is an error that names it
/// and says that `agentpact migrate` creates it.
pub async fn connect(database: &DatabaseArgs, size: u32) -> anyhow::Result<PgPool> {
    match open(database, size).await {
        Err(e) if code(&e).as_deref() == Some(NO_SUCH_DATABASE) => {
            Err(anyhow!("{}: run `agentpact migrate`, which creates it and its tables", missing(database)))
        }
        opened => opened.map_err(not_connected),
    }
}

/// A pool of `size` connections to DATABASE_URL with every migration applied, the database
/// created first when it does not exist (one log line says so).
pub async fn migrated(database: &DatabaseArgs, size: u32) -> anyhow::Result<PgPool> {
    let pool = match open(database, size).await {
        Err(e) if code(&e).as_deref() == Some(NO_SUCH_DATABASE) => {
            create(database).await?;
            open(database, size).await.map_err(not_connected)?
        }
        opened => opened.map_err(not_connected)?,
    };
    agentpact_schema::MIGRATOR.run(&pool).await.context("applying migrations")?;
    Ok(pool)
}

async fn open(database: &DatabaseArgs, size: u32) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new().max_connections(size).connect(&database.database_url).await
}

/// `CREATE DATABASE` (its name quoted) over the server's maintenance database, as `createdb` does.
async fn create(database: &DatabaseArgs) -> anyhow::Result<()> {
    let (name, server) = target(database);
    match Postgres::create_database(&database.database_url).await {
        Ok(()) => {
            tracing::info!(
                "created the database \"{name}\" on {server}: DATABASE_URL names it and it did not exist"
            );
            Ok(())
        }
        Err(e) if code(&e).as_deref() == Some(DATABASE_EXISTS) => Ok(()),
        Err(e) => Err(anyhow!(
            "{}, and creating it failed: {}. Create it as a user who may (`createdb {name}`), or point \
             DATABASE_URL at a database that exists",
            missing(database),
            said(&e)
        )),
    }
}

/// A failure to connect other than a missing database: what to check, and Postgres' reason.
fn not_connected(e: sqlx::Error) -> anyhow::Error {
    anyhow!(
        "connecting to DATABASE_URL (is Postgres running, and are the user and password right?): {}",
        said(&e)
    )
}

/// That the database DATABASE_URL names does not exist, naming it and its server.
fn missing(database: &DatabaseArgs) -> String {
    let (name, server) = target(database);
    format!("the database \"{name}\" that DATABASE_URL names does not exist on {server}")
}

/// The database's name (the user's when the URL names none, as Postgres does) and its server's
/// host and port: what may be shown of the URL.
fn target(database: &DatabaseArgs) -> (String, String) {
    match database.database_url.parse::<PgConnectOptions>() {
        Ok(options) => (
            options.get_database().unwrap_or(options.get_username()).to_owned(),
            format!("{}:{}", options.get_host(), options.get_port()),
        ),
        Err(_) => ("?".to_owned(), "the server".to_owned()),
    }
}

/// Postgres' error code, when the error is Postgres'.
fn code(e: &sqlx::Error) -> Option<Cow<'_, str>> {
    e.as_database_error().and_then(|d| d.code())
}

/// What went wrong: Postgres' own message when it answered, else sqlx's.
fn said(e: &sqlx::Error) -> String {
    e.as_database_error().map_or_else(|| e.to_string(), |d| d.message().to_owned())
}
