//! An extension that passes every response through a function on its way out, for HTTP answers
//! and each websocket payload alike: the error codes and the answer cap are two such functions.

use std::sync::Arc;

use async_graphql::{
    Response,
    extensions::{Extension, ExtensionContext, ExtensionFactory, NextRequest, NextSubscribe},
    futures_util::stream::{BoxStream, StreamExt},
};

/// Applies its function to every response.
#[derive(Clone, Copy)]
pub struct MapResponses(pub fn(Response) -> Response);

impl ExtensionFactory for MapResponses {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(*self)
    }
}

#[async_graphql::async_trait::async_trait]
impl Extension for MapResponses {
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        (self.0)(next.run(ctx).await)
    }

    fn subscribe<'s>(
        &self,
        ctx: &ExtensionContext<'_>,
        stream: BoxStream<'s, Response>,
        next: NextSubscribe<'_>,
    ) -> BoxStream<'s, Response> {
        let map = self.0;
        next.run(ctx, stream).map(map).boxed()
    }
}
