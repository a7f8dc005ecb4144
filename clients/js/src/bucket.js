// A token bucket: the client paces its own frames below the server's per-socket limit.

export class TokenBucket {
  /**
   * @param {number} rate tokens a second
   * @param {number} burst most tokens held
   * @param {() => number} [now] milliseconds clock
   */
  constructor(rate, burst, now = () => performance.now()) {
    this.rate = rate;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.stamp = now();
  }

  refill() {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.stamp) / 1000) * this.rate);
    this.stamp = now;
  }

  /** Take one token if there is one. */
  take() {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Milliseconds until a token is there (0: now). */
  wait() {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }
}
