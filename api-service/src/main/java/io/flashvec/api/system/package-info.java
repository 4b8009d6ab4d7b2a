/** Wiring of the storage engine, health and readiness, version info and the OpenAPI document. */
package io.flashvec.api.system;
