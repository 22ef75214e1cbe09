//! The session's catalog, as [`crate::with_variant`] installs it: the
//! catalogs and schemas the session would have anyway, each wrapped so that
//! an in-memory table with a VARIANT column is registered as a
//! [`ShreddedMemTable`], which keeps that column shredded
//! ([`crate::memtable`]). Every other table, and every other call, goes to the
//! wrapped catalog unchanged.
//!
//! This is how `CREATE TABLE ... AS` shreds through DataFusion's own
//! `ctx.sql()`: DataFusion registers the new `MemTable` through the schema's
//! `register_table`.
//!
//! ```text
//! CREATE TABLE m AS SELECT v FROM 'events/'
//!   DataFusion: MemTable(m)  ->  VariantSchema::register_table  ->  ShreddedMemTable(m)
//! ```

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProviderList, SchemaProvider, TableProvider,
};
use datafusion::common::Result;
use datafusion::datasource::{MemTable, TableType};

use crate::memtable::{ShreddedMemTable, keeps_shredded};

/// Catalogs whose schemas keep VARIANT columns of in-memory tables shredded.
#[derive(Debug)]
pub struct VariantCatalogList {
    inner: Arc<dyn CatalogProviderList>,
}

impl VariantCatalogList {
    /// Wraps `inner` (DataFusion's in-memory list when `None`).
    pub fn new(inner: Option<Arc<dyn CatalogProviderList>>) -> Self {
        Self {
            inner: inner.unwrap_or_else(|| Arc::new(MemoryCatalogProviderList::new())),
        }
    }
}

/// `catalog`, wrapped once.
fn wrap_catalog(catalog: Arc<dyn CatalogProvider>) -> Arc<dyn CatalogProvider> {
    if catalog.is::<VariantCatalog>() {
        catalog
    } else {
        Arc::new(VariantCatalog { inner: catalog })
    }
}

impl CatalogProviderList for VariantCatalogList {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.inner.register_catalog(name, wrap_catalog(catalog))
    }

    fn catalog_names(&self) -> Vec<String> {
        self.inner.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        self.inner.catalog(name).map(wrap_catalog)
    }
}

/// A catalog whose schemas are [`VariantSchema`]s.
#[derive(Debug)]
pub struct VariantCatalog {
    inner: Arc<dyn CatalogProvider>,
}

/// `schema`, wrapped once.
fn wrap_schema(schema: Arc<dyn SchemaProvider>) -> Arc<dyn SchemaProvider> {
    if schema.is::<VariantSchema>() {
        schema
    } else {
        Arc::new(VariantSchema { inner: schema })
    }
}

impl CatalogProvider for VariantCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.inner.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        self.inner.schema(name).map(wrap_schema)
    }

    fn register_schema(
        &self,
        name: &str,
        schema: Arc<dyn SchemaProvider>,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.inner.register_schema(name, schema)
    }

    fn deregister_schema(
        &self,
        name: &str,
        cascade: bool,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.inner.deregister_schema(name, cascade)
    }
}

/// A schema that registers an in-memory table with a VARIANT column as a
/// [`ShreddedMemTable`].
#[derive(Debug)]
pub struct VariantSchema {
    inner: Arc<dyn SchemaProvider>,
}

#[async_trait]
impl SchemaProvider for VariantSchema {
    fn owner_name(&self) -> Option<&str> {
        self.inner.owner_name()
    }

    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.inner.table(name).await
    }

    async fn table_type(&self, name: &str) -> Result<Option<TableType>> {
        self.inner.table_type(name).await
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let table = if keeps_shredded(table.as_ref()) {
            let any: Arc<dyn std::any::Any + Send + Sync> = Arc::<dyn TableProvider>::clone(&table);
            match any.downcast::<MemTable>() {
                Ok(mem) => Arc::new(ShreddedMemTable::new(mem)) as Arc<dyn TableProvider>,
                Err(_) => table,
            }
        } else {
            table
        };
        self.inner.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.inner.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}
