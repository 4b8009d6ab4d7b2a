/** The FlashVec server application: configuration and wiring of the feature packages. */
package io.flashvec.api;
