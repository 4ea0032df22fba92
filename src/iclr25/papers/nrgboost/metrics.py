"""Evaluation protocols: cross-validation folds, single-column inference scores, early
stopping of the number of trees, the discriminator AUC and train-on-synthetic/test-on-real."""

from __future__ import annotations

import numpy as np

from iclr25.papers.nrgboost.baselines import xgboost_model
from iclr25.papers.nrgboost.data import Table


def fold_split(n: int, seed: int, n_folds: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) row indices of fold `seed % n_folds` of a shuffled K-fold split.

    Seeds 0..n_folds-1 are the folds of one shuffle; higher seeds reshuffle
    (shuffle seed `seed // n_folds`).
    """
    from sklearn.model_selection import KFold

    folds = KFold(n_folds, shuffle=True, random_state=seed // n_folds).split(np.arange(n))
    for k, (tr, te) in enumerate(folds):
        if k == seed % n_folds:
            return tr, te
    raise AssertionError("unreachable")


def target_values(table: Table, X) -> np.ndarray:
    """The target column of X as labels (classification) or floats (regression)."""
    y = X.iloc[:, 0]
    return y.astype(str).to_numpy() if table.task == "classification" else y.to_numpy(float)


def score(table: Table, y_true: np.ndarray, pred: np.ndarray) -> float:
    """The table's metric. `pred`: labels (accuracy), P(second class) (auc) or values (r2)."""
    from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

    if table.metric == "accuracy":
        return float(accuracy_score(y_true, pred))
    if table.metric == "auc":
        classes = np.unique(y_true)
        return float(roc_auc_score(y_true == classes[-1], pred))
    return float(r2_score(y_true, pred))


def density_prediction(table: Table, model, X, n_trees=None) -> np.ndarray:
    """What `score` needs from a density model predicting column 0 of X."""
    if table.metric == "auc":
        proba = model.predict_proba(X, 0, n_trees=n_trees)
        classes = np.asarray(model.classes(0)).astype(str)
        return proba[:, int(np.argmax(classes == np.sort(classes)[-1]))]
    pred = model.predict(X, 0, n_trees=n_trees)
    return pred.astype(str) if table.task == "classification" else pred


def staged_scores(table: Table, model, X, steps: np.ndarray) -> np.ndarray:
    """The metric on X after each tree count in `steps` (one pass over the trees)."""
    y = target_values(table, X)
    if table.metric == "auc":
        proba = model._conditional(X, 0, steps)[1]
        classes = np.asarray(model.classes(0)).astype(str)
        k = int(np.argmax(classes == np.sort(classes)[-1]))
        return np.array([score(table, y, p[:, k]) for p in proba])
    preds = model.staged_predict(X, 0, steps)
    if table.task == "classification":
        preds = [p.astype(str) for p in preds]
    return np.array([score(table, y, p) for p in preds])


def _xy(table: Table, X):
    feats = X.iloc[:, 1:]
    if table.task == "classification":
        return feats, X.iloc[:, 0].astype(str)
    return feats, X.iloc[:, 0].to_numpy(float)


def fit_xgboost(table: Table, X_fit, X_val, seed: int, **params):
    """XGBoost on columns 1.. to predict column 0, early-stopped on X_val."""
    from sklearn.preprocessing import LabelEncoder

    Xf, yf = _xy(table, X_fit)
    Xv, yv = _xy(table, X_val)
    enc = None
    if table.task == "classification":
        enc = LabelEncoder().fit(np.concatenate([yf, yv]))
        yf, yv = enc.transform(yf), enc.transform(yv)
    model = xgboost_model(table.task, random_state=seed, **params)
    model.fit(Xf, yf, eval_set=[(Xv, yv)], verbose=False)
    return model, enc


def xgboost_prediction(table: Table, model, enc, X) -> np.ndarray:
    feats = X.iloc[:, 1:]
    if table.metric == "auc":
        proba = model.predict_proba(feats)
        return proba[:, int(np.argmax(enc.classes_ == np.sort(enc.classes_)[-1]))]
    if table.task == "classification":
        return enc.inverse_transform(model.predict(feats))
    return model.predict(feats)


def align_categories(like, X):
    """X with the dtypes of `like` (synthetic tables come back with their own categories)."""
    out = X.copy()
    for c in like.columns:
        if str(like[c].dtype) == "category":
            out[c] = out[c].astype(like[c].dtype)
        else:
            out[c] = out[c].astype(float)
    return out


# DEVIATION: the discriminator is an XGBoost classifier (200 trees, depth 4) cross-validated
# over the real test rows and as many samples; the paper's exact discriminator settings were
# not checked.
def discriminator_auc(real, synthetic, seed: int, n_trees: int = 200, n_folds: int = 5) -> float:
    """AUC of an XGBoost classifier telling real rows from synthetic ones (cross-validated,
    classes balanced by subsampling the larger); 0.5 means indistinguishable."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    pd = __import__("pandas")
    rng = np.random.default_rng(seed)
    n = min(len(real), len(synthetic))
    real = real.iloc[rng.permutation(len(real))[:n]]
    synthetic = align_categories(real, synthetic).iloc[rng.permutation(len(synthetic))[:n]]
    X = pd.concat([real, synthetic], ignore_index=True)
    y = np.r_[np.ones(n), np.zeros(n)]
    scores = np.empty(2 * n)
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y)
    for tr, te in folds:
        clf = xgboost_model(
            "classification",
            random_state=seed,
            n_estimators=n_trees,
            learning_rate=0.1,
            max_depth=4,
            early_stopping_rounds=None,
        )
        clf.fit(X.iloc[tr], y[tr], verbose=False)
        scores[te] = clf.predict_proba(X.iloc[te])[:, 1]
    return float(roc_auc_score(y, scores))


def train_synthetic_test_real(
    table: Table, synthetic, X_test, seed: int, n_trees: int = 500
) -> float:
    """ML efficiency: XGBoost trained on synthetic rows (early-stopped on a synthetic
    hold-out), scored on real test rows with the table's metric."""
    synthetic = align_categories(X_test, synthetic)
    if table.task == "classification" and synthetic.iloc[:, 0].nunique() < 2:
        return 0.5 if table.metric == "auc" else float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(synthetic))
    k = max(1, len(idx) // 5)
    model, enc = fit_xgboost(
        table, synthetic.iloc[idx[k:]], synthetic.iloc[idx[:k]], seed, n_estimators=n_trees
    )
    pred = xgboost_prediction(table, model, enc, X_test)
    return score(table, target_values(table, X_test), pred)
