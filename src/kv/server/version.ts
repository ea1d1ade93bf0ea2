/**
 * The Redis version svc answers as (HELLO, INFO's redis_version): clients check it before
 * using a feature. The commands svc has are Redis 7.0's, and its behaviour is checked against
 * redis-server 7.0.15 side by side.
 */
export const redisCompatibleVersion = "7.0.15";
