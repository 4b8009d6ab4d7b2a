/** Point endpoints: upsert (list or columnar batch), get, retrieve, delete, count, scroll. */
package io.flashvec.api.points;
