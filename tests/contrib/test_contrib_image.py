"""tf.contrib.image: rotate/translate/transform against NumPy, the transform helpers, and
dense_image_warp against a NumPy bilinear reference with finite-difference gradients."""

import numpy as np
import pytest

import tensorflux as tf

image = tf.contrib.image


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_rotate_quarter_turns_match_rot90_for_every_rank():
    img = np.arange(36, dtype=np.float32).reshape(6, 6)
    # TF's rotation maps output (x, y) to input via [[cos, -sin], [sin, cos]] about the center.
    r2, r3, r4 = _run([image.rotate(img, np.pi / 2),
                       image.rotate(img[:, :, None], np.pi / 2),
                       image.rotate(np.stack([img, img.T])[..., None], [np.pi / 2, np.pi])])
    c = 2.5
    expected = np.zeros_like(img)
    for y in range(6):
        for x in range(6):
            src_x = (x - c) * 0.0 - (y - c) * 1.0 + c
            src_y = (x - c) * 1.0 + (y - c) * 0.0 + c
            expected[y, x] = img[int(round(src_y)), int(round(src_x))]
    np.testing.assert_array_equal(r2, expected)
    np.testing.assert_array_equal(r3[:, :, 0], expected)
    np.testing.assert_array_equal(r4[0, :, :, 0], expected)
    np.testing.assert_array_equal(r4[1, :, :, 0], img.T[::-1, ::-1])
    assert r2.shape == (6, 6) and r3.shape == (6, 6, 1)


def test_rotate_bilinear_non_square_and_unknown_size():
    rng = np.random.RandomState(0)
    img = rng.rand(1, 5, 7, 2).astype(np.float32)
    angle = 0.3
    ph = tf.placeholder(tf.float32, [None, None, None, 2])
    static, dynamic = _run([image.rotate(img, angle, "bilinear"),
                            image.rotate(ph, angle, "BILINEAR")], {ph: img})
    h, w = 5, 7
    cos, sin = np.cos(angle), np.sin(angle)
    x_off = ((w - 1) - (cos * (w - 1) - sin * (h - 1))) / 2
    y_off = ((h - 1) - (sin * (w - 1) + cos * (h - 1))) / 2
    expected = np.zeros_like(img)
    for y in range(h):
        for x in range(w):
            sx, sy = cos * x - sin * y + x_off, sin * x + cos * y + y_off
            x0, y0 = int(np.floor(sx)), int(np.floor(sy))
            for yy, xx, wgt in ((y0, x0, (y0 + 1 - sy) * (x0 + 1 - sx)),
                                (y0, x0 + 1, (y0 + 1 - sy) * (sx - x0)),
                                (y0 + 1, x0, (sy - y0) * (x0 + 1 - sx)),
                                (y0 + 1, x0 + 1, (sy - y0) * (sx - x0))):
                if 0 <= yy < h and 0 <= xx < w:
                    expected[0, y, x] += wgt * img[0, yy, xx]
    np.testing.assert_allclose(static, expected, atol=1e-5)
    np.testing.assert_allclose(dynamic, expected, atol=1e-5)


def test_translate_shifts_with_zero_fill():
    img = np.arange(1, 21, dtype=np.int32).reshape(4, 5)
    out = _run(image.translate(img, [2, -1]))
    expected = np.zeros_like(img)
    expected[:3, 2:] = img[1:, :3]
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.int32
    batch = np.stack([img, img])[..., None].astype(np.uint8)
    out = _run(image.translate(batch, [[1, 0], [0, 1]]))
    np.testing.assert_array_equal(out[0, :, 1:, 0], batch[0, :, :-1, 0])
    np.testing.assert_array_equal(out[1, 1:, :, 0], batch[1, :-1, :, 0])
    assert (out[0, :, 0] == 0).all() and (out[1, 0] == 0).all()


def test_transform_output_shape_and_transform_helpers():
    img = np.random.RandomState(1).rand(4, 4, 1).astype(np.float32)
    out = image.transform(img, [1, 0, 0, 0, 1, 0, 0, 0], output_shape=[2, 6])
    assert out.shape.as_list() == [2, 6, 1]
    got = _run(out)
    np.testing.assert_array_equal(got[:, :4], img[:2])
    np.testing.assert_array_equal(got[:, 4:], 0)
    a = np.array([[0.9, 0.1, 1.0, -0.2, 1.1, 2.0, 0.01, 0.02]], np.float32)
    b = np.array([[1.0, 0.0, -3.0, 0.0, 1.0, 4.0, 0.0, 0.0]], np.float32)
    mats, flat, composed, trans, rots = _run([
        image.flat_transforms_to_matrices(a), image.matrices_to_flat_transforms(2 * np.eye(3)),
        image.compose_transforms(a, b), image.translations_to_projective_transforms([3, -4]),
        image.angles_to_projective_transforms([0.0, np.pi], 4, 6)])
    ma = np.append(a[0], 1).reshape(3, 3)
    np.testing.assert_allclose(mats[0], ma)
    np.testing.assert_allclose(flat, [[1, 0, 0, 0, 1, 0, 0, 0]])
    m = ma @ np.append(b[0], 1).reshape(3, 3)
    np.testing.assert_allclose(composed[0], (m / m[2, 2]).reshape(-1)[:8], rtol=1e-6)
    np.testing.assert_allclose(trans, b)
    np.testing.assert_allclose(rots[0], [1, 0, 0, 0, 1, 0, 0, 0], atol=1e-6)
    np.testing.assert_allclose(rots[1], [-1, 0, 5, 0, -1, 3, 0, 0], atol=1e-5)
    # composing = sampling through both: transform(x, compose(a, b)) == transform via matrices
    img2 = np.random.RandomState(2).rand(1, 6, 6, 1).astype(np.float32)
    t1 = np.array([1, 0, 1, 0, 1, 0, 0, 0], np.float32)
    t2 = np.array([1, 0, 0, 0, 1, 2, 0, 0], np.float32)
    np.testing.assert_allclose(_run(image.transform(img2, image.compose_transforms(t1, t2))),
                               _run(image.translate(img2, [-1, -2])))


def test_rotate_gradient_to_the_image_matches_finite_differences():
    rng = np.random.RandomState(3)
    img = rng.rand(1, 4, 5, 1)
    x = tf.placeholder(tf.float64, img.shape)
    w = rng.randn(1, 4, 5, 1)
    loss = tf.reduce_sum(image.rotate(x, 0.4, "BILINEAR") * w)
    grad = tf.gradients(loss, x)[0]
    with tf.Session() as sess:
        g = sess.run(grad, {x: img})
        eps = 1e-6
        for idx in [(0, 0, 0, 0), (0, 1, 2, 0), (0, 3, 4, 0), (0, 2, 1, 0)]:
            d = np.zeros_like(img)
            d[idx] = eps
            fd = (sess.run(loss, {x: img + d}) - sess.run(loss, {x: img - d})) / (2 * eps)
            np.testing.assert_allclose(g[idx], fd, rtol=1e-6, atol=1e-9)


def _warp_reference(img, flow):
    b, h, w, c = img.shape
    out = np.zeros_like(img)
    for n in range(b):
        for i in range(h):
            for j in range(w):
                qy, qx = i - flow[n, i, j, 0], j - flow[n, i, j, 1]
                y0 = int(min(max(0, np.floor(qy)), h - 2))
                x0 = int(min(max(0, np.floor(qx)), w - 2))
                ay = min(max(qy - y0, 0), 1)
                ax = min(max(qx - x0, 0), 1)
                top = img[n, y0, x0] + ax * (img[n, y0, x0 + 1] - img[n, y0, x0])
                bot = img[n, y0 + 1, x0] + ax * (img[n, y0 + 1, x0 + 1] - img[n, y0 + 1, x0])
                out[n, i, j] = top + ay * (bot - top)
    return out


def test_dense_image_warp_values_and_gradients():
    rng = np.random.RandomState(4)
    img = rng.rand(2, 4, 5, 3)
    flow = rng.uniform(-1.7, 1.7, (2, 4, 5, 2))
    x = tf.placeholder(tf.float64, img.shape)
    f = tf.placeholder(tf.float64, flow.shape)
    warped = image.dense_image_warp(x, f)
    assert warped.shape.as_list() == [2, 4, 5, 3]
    w = rng.randn(*img.shape)
    loss = tf.reduce_sum(warped * w)
    gx, gf = tf.gradients(loss, [x, f])
    with tf.Session() as sess:
        out, gx_v, gf_v = sess.run([warped, gx, gf], {x: img, f: flow})
        np.testing.assert_allclose(out, _warp_reference(img, flow), rtol=1e-12)
        eps = 1e-6
        for arr, g, idxs in ((img, gx_v, [(0, 0, 0, 1), (1, 3, 4, 2), (1, 2, 2, 0)]),
                             (flow, gf_v, [(0, 1, 1, 0), (0, 2, 3, 1), (1, 1, 2, 1)])):
            for idx in idxs:
                d = np.zeros_like(arr)
                d[idx] = eps
                feed_up = {x: img + d, f: flow} if arr is img else {x: img, f: flow + d}
                feed_dn = {x: img - d, f: flow} if arr is img else {x: img, f: flow - d}
                fd = (sess.run(loss, feed_up) - sess.run(loss, feed_dn)) / (2 * eps)
                np.testing.assert_allclose(g[idx], fd, rtol=1e-5, atol=1e-8)


def test_interpolate_bilinear_xy_indexing():
    grid = np.arange(12, dtype=np.float32).reshape(1, 3, 4, 1)
    ij = image.interpolate_bilinear(grid, [[[1.5, 0.5]]])
    xy = image.interpolate_bilinear(grid, [[[0.5, 1.5]]], indexing="xy")
    a, b = _run([ij, xy])
    assert a[0, 0, 0] == pytest.approx(4 * 1.5 + 0.5) and b[0, 0, 0] == a[0, 0, 0]


def test_bad_input_raises_typed_errors():
    with pytest.raises(TypeError, match="dtype"):
        image.rotate(tf.zeros([3, 3], tf.int16), 0.1)
    with pytest.raises(TypeError, match="rank"):
        image.transform(tf.zeros([1, 2, 3, 3, 1]), [1, 0, 0, 0, 1, 0, 0, 0])
    with pytest.raises(TypeError, match="Transforms"):
        image.transform(tf.zeros([3, 3]), tf.zeros([1, 1, 8]))
    with pytest.raises(ValueError, match="output_shape"):
        image.transform(tf.zeros([3, 3]), tf.zeros([8]), output_shape=[1, 2, 3])
    with pytest.raises(ValueError, match="interpolation"):
        image.transform(tf.zeros([3, 3]), tf.zeros([8]), interpolation="CUBIC")
    with pytest.raises(TypeError, match="Angles"):
        image.angles_to_projective_transforms(tf.zeros([2, 2]), 3, 3)
    with pytest.raises(TypeError, match="Translations"):
        image.translations_to_projective_transforms(tf.zeros([1, 1, 2]))
    with pytest.raises(ValueError, match="empty"):
        image.compose_transforms()
    with pytest.raises(ValueError, match="flow"):
        image.dense_image_warp(tf.zeros([1, 3, 3, 1]), tf.zeros([1, 3, 3, 3]))
    with pytest.raises(ValueError, match="Indexing"):
        image.interpolate_bilinear(tf.zeros([1, 3, 3, 1]), tf.zeros([1, 2, 2]), indexing="yx")
    with pytest.raises(tf.contrib.ContribNotProvidedError, match="connected_components"):
        _ = image.connected_components


def _spline_reference(c, f, q, order, lam):
    """The same bordered system solved in NumPy, one batch element at a time."""

    def phi(r2):
        r2 = np.maximum(r2, 1e-10)
        r = np.sqrt(r2)
        return r ** order * (np.log(r) if order % 2 == 0 else 1.0)

    out = []
    for cb, fb, qb in zip(c, f, q):
        n, d = cb.shape
        a = phi(((cb[:, None] - cb[None]) ** 2).sum(-1)) + lam * np.eye(n)
        border = np.hstack([cb, np.ones((n, 1))])
        lhs = np.block([[a, border], [border.T, np.zeros((d + 1, d + 1))]])
        sol = np.linalg.solve(lhs, np.vstack([fb, np.zeros((d + 1, fb.shape[1]))]))
        w, v = sol[:n], sol[n:]
        out.append(phi(((qb[:, None] - cb[None]) ** 2).sum(-1)) @ w
                   + np.hstack([qb, np.ones((len(qb), 1))]) @ v)
    return np.stack(out)


@pytest.mark.parametrize("order,lam", [(1, 0.0), (2, 0.0), (3, 0.01), (4, 0.0)])
def test_interpolate_spline_matches_numpy_and_interpolates(order, lam):
    rng = np.random.RandomState(order)
    c = rng.rand(2, 7, 2)
    f = rng.randn(2, 7, 3)
    q = rng.rand(2, 5, 2)
    out = image.interpolate_spline(c, f, q, order, regularization_weight=lam)
    at_train = image.interpolate_spline(c, f, c, order)
    got, train_v = _run([out, at_train])
    np.testing.assert_allclose(got, _spline_reference(c, f, q, order, lam), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(train_v, f, atol=1e-6)


def test_interpolate_spline_reproduces_affine_functions_and_has_gradients():
    rng = np.random.RandomState(9)
    c = rng.rand(1, 8, 2)
    affine = lambda p: p @ np.array([[2.0], [-1.0]]) + 0.5  # noqa: E731
    q = rng.rand(1, 4, 2)
    fv = tf.placeholder(tf.float64, [1, 8, 1])
    out = image.interpolate_spline(c, fv, q, 2)
    (g,) = tf.gradients(tf.reduce_sum(out), [fv])
    with tf.Session() as sess:
        got, g_v = sess.run([out, g], {fv: affine(c)})
        np.testing.assert_allclose(got, affine(q), rtol=1e-8)
        base = sess.run(tf.reduce_sum(out), {fv: affine(c)})
        d = np.zeros((1, 8, 1))
        d[0, 3, 0] = 1e-6
        bumped = sess.run(tf.reduce_sum(out), {fv: affine(c) + d})
    assert g_v[0, 3, 0] == pytest.approx((bumped - base) / 1e-6, rel=1e-4)
    with pytest.raises(ValueError, match="order"):
        image.interpolate_spline(c, affine(c), q, 0)
    with pytest.raises(ValueError, match="train_values"):
        image.interpolate_spline(c, np.zeros((1, 7, 1)), q, 2)


def test_sparse_image_warp_moves_control_points():
    rng = np.random.RandomState(10)
    img = rng.rand(1, 8, 9, 2).astype(np.float32)
    src = np.array([[[2.0, 2.0], [2.0, 6.0], [5.0, 3.0], [6.0, 7.0]]], np.float32)
    # Every control point moves by (+1, -2): the spline reproduces the constant flow.
    warped, flows = image.sparse_image_warp(img, src, src + [1.0, -2.0])
    identity, zero = image.sparse_image_warp(img, src, src, num_boundary_points=2)
    w_v, f_v, id_v, z_v = _run([warped, flows, identity, zero])
    np.testing.assert_allclose(f_v, np.broadcast_to([1.0, -2.0], f_v.shape), atol=1e-4)
    # out[i, j] = img[i - 1, j + 2] where that is inside the image
    np.testing.assert_allclose(w_v[0, 1:, :-2], img[0, :-1, 2:], atol=1e-4)
    np.testing.assert_allclose(z_v, 0, atol=1e-5)
    np.testing.assert_allclose(id_v, img, atol=1e-5)
    with pytest.raises(ValueError, match="static shape"):
        image.sparse_image_warp(tf.placeholder(tf.float32, [None, 4, 4, 1]), src, src)


def _yiq_reference(rgb, hue, sat, val):
    to_yiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])
    yiq = rgb @ to_yiq.T
    y, i, q = yiq[..., 0], yiq[..., 1], yiq[..., 2]
    c, s = np.cos(hue), np.sin(hue)
    adjusted = np.stack([val * y, val * sat * (c * i - s * q), val * sat * (s * i + c * q)], -1)
    return adjusted @ np.linalg.inv(to_yiq).T


def test_adjust_hsv_in_yiq_matches_the_yiq_formula():
    rgb = np.random.RandomState(11).rand(2, 3, 4, 3)
    outs = _run([image.adjust_hsv_in_yiq(rgb, 0.7, 0.5, 1.2),
                 image.adjust_hsv_in_yiq(rgb),
                 image.adjust_hsv_in_yiq(rgb, 0.0, 0.0, 1.0)])
    np.testing.assert_allclose(outs[0], _yiq_reference(rgb, 0.7, 0.5, 1.2), atol=1e-6)
    np.testing.assert_allclose(outs[1], rgb, atol=1e-6)
    luma = rgb @ [0.299, 0.587, 0.114]
    np.testing.assert_allclose(outs[2], np.repeat(luma[..., None], 3, -1), atol=1e-6)
    u8 = (rgb[0] * 255).astype(np.uint8)
    got = _run(image.adjust_hsv_in_yiq(u8, scale_value=0.5))
    assert got.dtype == np.uint8
    assert np.abs(got.astype(int) - np.round(u8 * 0.5)).max() <= 1
    rand = _run(image.random_yiq_hsv(rgb.astype(np.float32), 0.5, 0.8, 1.2, 0.9, 1.1, seed=1))
    assert rand.shape == rgb.shape and not np.allclose(rand, rgb)
    with pytest.raises(ValueError, match="3 channels"):
        image.adjust_hsv_in_yiq(np.zeros((2, 2, 4)))
    with pytest.raises(ValueError, match="lower_saturation"):
        image.random_yiq_hsv(rgb, lower_saturation=2, upper_saturation=1)
