/**
 * Shared REST plumbing: the Qdrant response envelope, request parsing with exact error messages,
 * the single error mapping, body limits, and the executor that keeps blocking engine calls off the
 * Netty event loop.
 */
package io.flashvec.api.web;
